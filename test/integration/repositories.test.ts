import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { useTestApp } from '../support/use-test-app.ts';

describe('repositories', () => {
  const t = useTestApp({ env: { MAINLINE_PUBLIC_URL: 'https://mainline.example.test' } });

  it('creates a repository and finds it again whatever the letter case', async () => {
    const created = await t.post(
      '/v1/repositories/create',
      { repo: { host: 'GitHub.com', owner: 'Acme', name: 'Api' } },
      t.orgToken,
    );
    expect(created.statusCode).toBe(200);
    const repo = created.json().repository;
    expect(repo).toMatchObject({
      host: 'GitHub.com',
      owner: 'Acme',
      name: 'Api',
      html_url: 'https://mainline.example.test/acme/repos/GitHub.com/Acme/Api',
    });
    expect(new Date(repo.created_at).toISOString()).toBe(repo.created_at);
    const found = await t.post(
      '/v1/repositories/get',
      { repo: { host: 'github.com', owner: 'ACME', name: 'api' } },
      t.orgToken,
    );
    expect(found.statusCode).toBe(200);
    expect(found.json().repository.id).toBe(repo.id);
  });

  it('answers 409 ALREADY_EXISTS when creating a repository twice', async () => {
    const res = await t.post(
      '/v1/repositories/create',
      { repo: { host: 'github.com', owner: 'acme', name: 'API' } },
      t.orgToken,
    );
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('ALREADY_EXISTS');
  });

  it('answers an unknown repository with 404 REPO_NOT_FOUND saying how one comes to exist', async () => {
    const res = await t.post('/v1/repositories/get', { repo: REPO }, t.orgToken);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('REPO_NOT_FOUND');
    expect(res.json().error.message).toContain('github.com/acme/web is not known to organization "acme"');
    expect(res.json().error.message).toContain('POST /v1/repositories/create');
  });

  it('rejects a repository name with a slash', async () => {
    const res = await t.post(
      '/v1/repositories/create',
      { repo: { host: 'github.com', owner: 'acme', name: 'a/b' } },
      t.orgToken,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details[0].path).toBe('$.repo.name');
  });
});

describe('repository pages', () => {
  const t = useTestApp();
  const names = ['a1', 'a2', 'b1', 'b2', 'c1', 'c2', 'd1'];
  const list = (page_query: object, tok = t.orgToken) => t.post('/v1/repositories/list', { page_query }, tok);

  beforeAll(async () => {
    for (const name of [...names].reverse()) {
      await t.post(
        '/v1/repositories/create',
        { repo: { host: 'github.com', owner: 'acme', name } },
        t.orgToken,
      );
    }
  });

  it('walks next_page_token through every repository once, in order', async () => {
    const seen: string[] = [];
    const indexes: number[] = [];
    let pageToken = '';
    do {
      const res = await list({ page_size: 3, page_token: pageToken });
      expect(res.statusCode).toBe(200);
      const { repositories, page } = res.json();
      seen.push(...repositories.map((r: { name: string }) => r.name));
      indexes.push(page.page_index);
      expect(page).toMatchObject({ total_rows: 7, total_pages: 3 });
      pageToken = page.next_page_token;
    } while (pageToken !== '');
    expect(seen).toEqual(names);
    expect(indexes).toEqual([0, 1, 2]);
  });

  it('goes back with prev_page_token and jumps with last_page_token', async () => {
    const first = (await list({ page_size: 3 })).json().page;
    expect(first.prev_page_token).toBe('');
    const second = (await list({ page_size: 3, page_token: first.next_page_token })).json();
    const back = (await list({ page_size: 3, page_token: second.page.prev_page_token })).json();
    expect(back.repositories.map((r: { name: string }) => r.name)).toEqual(['a1', 'a2', 'b1']);
    expect(back.page.page_index).toBe(0);
    expect(back.page.prev_page_token).toBe('');
    const last = (await list({ page_size: 3, page_token: first.last_page_token })).json();
    expect(last.repositories.map((r: { name: string }) => r.name)).toEqual(['d1']);
    expect(last.page).toMatchObject({ page_index: 2, next_page_token: '' });
    const beforeLast = (await list({ page_size: 3, page_token: last.page.prev_page_token })).json();
    expect(beforeLast.repositories.map((r: { name: string }) => r.name)).toEqual(['b2', 'c1', 'c2']);
  });

  it('answers 400 INVALID_PAGE_TOKEN for an altered token, a token of another page size or another organization', async () => {
    const next = (await list({ page_size: 3 })).json().page.next_page_token as string;
    const altered = `${next.slice(0, 5)}${next[5] === 'A' ? 'B' : 'A'}${next.slice(6)}`;
    const other = await t.token('globex');
    for (const [query, tok] of [
      [{ page_size: 3, page_token: altered }, t.orgToken],
      [{ page_size: 3, page_token: 'garbage' }, t.orgToken],
      [{ page_size: 4, page_token: next }, t.orgToken],
      [{ page_size: 3, page_token: next }, other],
    ] as const) {
      const res = await list(query, tok);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('INVALID_PAGE_TOKEN');
    }
  });

  it('answers an empty organization with zero pages and empty tokens', async () => {
    const other = await t.token('initech');
    expect((await list({ page_size: 10 }, other)).json().page).toEqual({
      total_rows: 0,
      total_pages: 0,
      next_page_token: '',
      prev_page_token: '',
      last_page_token: '',
      page_index: 0,
    });
  });
});
