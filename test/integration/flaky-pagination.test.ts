import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const names = Array.from({ length: 25 }, (_, i) => `test_${String(i).padStart(2, '0')}`);

describe('paging through unhealthy tests', () => {
  const t = useTestApp();
  const scope = { repo: REPO, org_url_slug: 'acme' };
  const page = (page_query: object, status = 'FLAKY', tok = t.orgToken) =>
    t.post('/v1/flaky-tests/list-unhealthy-tests', { ...scope, status, page_query }, tok);

  beforeAll(async () => {
    // Every test fails then passes on one commit of PR 1: all 25 are FLAKY with one PR impacted.
    await upload(
      t,
      t.orgToken,
      [{ name: 'a.xml', content: junitXml(names.map((name) => ({ name, fail: 'boom' }))) }],
      { sha: 's1', pr: 1, branch: 'pr-1' },
    );
    await upload(t, t.orgToken, [{ name: 'a.xml', content: junitXml(names.map((name) => ({ name }))) }], {
      sha: 's1',
      pr: 1,
      branch: 'pr-1',
    });
  });

  it('walks next_page_token over every test exactly once, even while uploads reorder the list', async () => {
    const seen: string[] = [];
    let token_ = '';
    let pages = 0;
    do {
      const res = await page({ page_size: 10, page_token: token_ });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.page).toMatchObject({ total_rows: 25, total_pages: 3, page_index: pages });
      seen.push(...body.tests.map((x: { name: string }) => x.name));
      // Between pages, failures on new PRs push the tests at the end of the order to the front.
      const tail = names.slice(-3 - pages * 3);
      await upload(
        t,
        t.orgToken,
        [{ name: 'b.xml', content: junitXml(tail.map((name) => ({ name, fail: 'boom' }))) }],
        { sha: `p${pages}`, pr: 100 + pages, branch: `pr-${100 + pages}` },
      );
      token_ = body.page.next_page_token;
      pages += 1;
    } while (token_ !== '');
    expect(pages).toBe(3);
    expect([...seen].sort()).toEqual(names);
    expect(new Set(seen).size).toBe(25);
  });

  it('a new walk sees the new order: most PRs impacted first, then name', async () => {
    const first = (await page({ page_size: 5 })).json().tests as {
      name: string;
      pull_requests_impacted_last_7d: number;
    }[];
    const counts = first.map((x) => x.pull_requests_impacted_last_7d);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(counts[0]).toBeGreaterThan(1);
  });

  it('moves back with prev_page_token and to the end with last_page_token', async () => {
    const p0 = (await page({ page_size: 10 })).json();
    expect(p0.page.prev_page_token).toBe('');
    const p1 = (await page({ page_size: 10, page_token: p0.page.next_page_token })).json();
    const back = (await page({ page_size: 10, page_token: p1.page.prev_page_token })).json();
    expect(back.tests.map((x: { id: string }) => x.id)).toEqual(p0.tests.map((x: { id: string }) => x.id));
    const last = (await page({ page_size: 10, page_token: p0.page.last_page_token })).json();
    expect(last.tests).toHaveLength(5);
    expect(last.page).toMatchObject({ page_index: 2, next_page_token: '' });
  });

  it('repeated first pages share one frozen order until the repository’s data changes', async () => {
    const a = (await page({ page_size: 10 })).json().page.next_page_token;
    const b = (await page({ page_size: 10 })).json().page.next_page_token;
    expect(b).toBe(a);
    await upload(t, t.orgToken, [{ name: 'c.xml', content: junitXml([{ name: 'test_00' }]) }], {
      sha: 'later',
    });
    const c = (await page({ page_size: 10 })).json().page.next_page_token;
    expect(c).not.toBe(a);
  });

  it('shows each test as it is now when a page is read again: a ticket linked and a quarantine lifted in between', async () => {
    const p0 = (await page({ page_size: 10 })).json();
    const again = () => page({ page_size: 10, page_token: p0.page.next_page_token });
    const before = (await again()).json().tests[0];
    expect(before.ticket).toBeUndefined();
    expect(before.quarantined).toBe(true);
    const linked = await t.post(
      '/v1/flaky-tests/link-ticket-to-test-case',
      { repo: REPO, test_case_id: before.id, external_ticket_id: 'KAN-7' },
      t.orgToken,
    );
    expect(linked.statusCode).toBe(200);
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { repo: REPO, org_url_slug: 'acme', test_id: before.id, setting: 'NEVER_QUARANTINE' },
      t.orgToken,
    );
    expect(override.statusCode).toBe(200);
    const after = (await again()).json().tests[0];
    expect(after.id).toBe(before.id);
    expect(after.ticket).toBeDefined();
    expect(after.quarantined).toBe(false);
    // Back to automatic: quarantined again (the tests below count on every test being quarantined).
    await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { repo: REPO, org_url_slug: 'acme', test_id: before.id, setting: 'AUTO' },
      t.orgToken,
    );
    expect((await again()).json().tests[0].quarantined).toBe(true);
  });

  it('shows the quarantined list as it is now when the same page is asked again', async () => {
    const read = async () =>
      (
        await t.post(
          '/v1/flaky-tests/list-quarantined-tests',
          { ...scope, page_query: { page_size: 100 } },
          t.orgToken,
        )
      ).json() as { quarantined_tests: { test_case_id: string; quarantine_setting: string }[] };
    const before = await read();
    expect(before.quarantined_tests).toHaveLength(25);
    expect(await read()).toEqual(before);
    const id = before.quarantined_tests[0]?.test_case_id as string;
    const set = (setting: string) =>
      t.post(
        '/v1/flaky-tests/set-quarantine-override',
        { repo: REPO, org_url_slug: 'acme', test_id: id, setting },
        t.orgToken,
      );
    expect((await set('NEVER_QUARANTINE')).statusCode).toBe(200);
    const lifted = await read();
    expect(lifted.quarantined_tests.map((x) => x.test_case_id)).not.toContain(id);
    expect(lifted.quarantined_tests).toHaveLength(24);
    expect((await set('ALWAYS_QUARANTINE')).statusCode).toBe(200);
    const always = (await read()).quarantined_tests.find((x) => x.test_case_id === id);
    expect(always?.quarantine_setting).toBe('ALWAYS_QUARANTINE');
    await set('AUTO');
    // Quarantined again (automatically), from now on.
    const again = await read();
    expect(again.quarantined_tests.map((x) => x.test_case_id)).toEqual(
      before.quarantined_tests.map((x) => x.test_case_id),
    );
    expect(again.quarantined_tests[0]?.quarantine_setting).toBe('AUTO_QUARANTINE');
  });

  it('answers one page with empty tokens when everything fits', async () => {
    const res = (await page({ page_size: 100 })).json();
    expect(res.tests).toHaveLength(25);
    expect(res.page).toMatchObject({
      total_rows: 25,
      total_pages: 1,
      next_page_token: '',
      prev_page_token: '',
      page_index: 0,
    });
  });

  it('refuses page_size outside 1–100 and a token from another query', async () => {
    for (const page_size of [0, 101, 1.5]) {
      const res = await page({ page_size });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details[0].path).toBe('$.page_query.page_size');
    }
    const next = (await page({ page_size: 10 })).json().page.next_page_token;
    expect((await page({ page_size: 10, page_token: next }, 'BROKEN')).json().error.code).toBe(
      'INVALID_PAGE_TOKEN',
    );
    const quarantined = await t.post(
      '/v1/flaky-tests/list-quarantined-tests',
      { ...scope, page_query: { page_size: 10, page_token: next } },
      t.orgToken,
    );
    expect(quarantined.statusCode).toBe(400);
  });

  it('pages the quarantined list by name', async () => {
    const seen: string[] = [];
    let next = '';
    do {
      const body = (
        await t.post(
          '/v1/flaky-tests/list-quarantined-tests',
          { ...scope, page_query: { page_size: 7, page_token: next } },
          t.orgToken,
        )
      ).json();
      seen.push(...body.quarantined_tests.map((x: { name: string }) => x.name));
      next = body.page.next_page_token;
    } while (next !== '');
    expect(seen).toEqual(names);
  });

  it('answers an unknown repository with 404 REPO_NOT_FOUND and a wrong org with 404 ORG_NOT_FOUND', async () => {
    const res = await t.post(
      '/v1/flaky-tests/list-unhealthy-tests',
      {
        repo: { ...REPO, name: 'nope' },
        org_url_slug: 'acme',
        status: 'FLAKY',
        page_query: { page_size: 1 },
      },
      t.orgToken,
    );
    expect(res.json().error.code).toBe('REPO_NOT_FOUND');
    const org = await t.post(
      '/v1/flaky-tests/list-unhealthy-tests',
      { ...scope, org_url_slug: 'other', status: 'FLAKY', page_query: { page_size: 1 } },
      t.orgToken,
    );
    expect(org.json().error.code).toBe('ORG_NOT_FOUND');
  });
});
