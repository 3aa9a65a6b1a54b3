/**
 * Replay of the readers that walk list-unhealthy-tests and list-quarantined-tests to the end, as Trunk's
 * published clients page them (facts from /work/shared/reference/trunk-api.md §1–2 and real-clients.md, and
 * from Trunk's API reference page "Pagination with page_token", docs.trunk.io flaky-tests reference):
 *
 * - PostHog's trunk_io warehouse source: `x-api-token`, page_query {page_size: 100, page_token: ""} on the
 *   first call, then page_token = the previous page.next_page_token; it stops when next_page_token is empty
 *   or missing; list-unhealthy-tests is walked once per status, FLAKY then BROKEN, then list-quarantined-tests;
 *   it never reads prev/last tokens or total_pages;
 * - the documented curl loop: the first call omits page_token (page_query {page_size: 50}), later calls pass
 *   next_page_token back verbatim.
 *
 * What such a reader needs: every test exactly once, an end it reaches (an empty next_page_token), and no test
 * that existed when it started lost because CI uploaded results while it was paging.
 */
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const ORG = 'acme';
/** 230 tests: three pages of 100 (and five of 50). */
const names = Array.from({ length: 230 }, (_, i) => `checkout renders line ${String(i).padStart(3, '0')}`);

interface Page {
  next_page_token?: string;
  total_rows: number;
}

describe('a reader walking every page of the flaky-tests lists', () => {
  const t = useTestApp({ org: ORG });
  let base: string;
  let prs = 1;

  /** CI's JUnit upload through the ingest path: the tests fail, then pass on a retry of the same commit. */
  const flakyOnNewPr = async (tests: readonly string[]) => {
    const pr = prs++;
    const at = { sha: `sha-${pr}`, pr, branch: `pr-${pr}` };
    const failed = junitXml(tests.map((name) => ({ name, fail: 'timed out' })));
    const passed = junitXml(tests.map((name) => ({ name })));
    for (const content of [failed, passed]) {
      const res = await upload(t, t.orgToken, [{ name: 'junit.xml', content }], at);
      expect(res.statusCode, res.body).toBe(200);
    }
  };

  /** One POST as the clients send it: JSON, x-api-token, over a real socket. */
  const post = async (path: string, body: object) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      body: JSON.stringify(body),
      redirect: 'error',
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return JSON.parse(text);
  };

  /**
   * Walks one list to its end, the way PostHog's source does (or the docs' loop, which omits the first
   * token); `between` runs after each page, as CI uploads would land between a reader's requests.
   */
  const walk = async (
    path: string,
    items: string,
    extra: object,
    first: { page_size: number; page_token?: string },
    between: (pageIndex: number) => Promise<void> = async () => {},
  ) => {
    const seen: string[] = [];
    let page_query: { page_size: number; page_token?: string } = first;
    for (let i = 0; ; i++) {
      expect(i, 'the walk must end').toBeLessThan(50);
      const body = await post(path, { repo: REPO, org_url_slug: ORG, ...extra, page_query });
      seen.push(...(body[items] as { name: string }[]).map((x) => x.name));
      const page = body.page as Page;
      await between(i);
      if (page.next_page_token === undefined || page.next_page_token === '') return { seen, pages: i + 1 };
      page_query = { page_size: first.page_size, page_token: page.next_page_token };
    }
  };

  beforeAll(async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1`;
    await flakyOnNewPr(names);
  });

  it('PostHog-style: FLAKY then BROKEN then quarantined, 100 a page, each test once, to an empty token', async () => {
    const flaky = await walk(
      '/flaky-tests/list-unhealthy-tests',
      'tests',
      { status: 'FLAKY' },
      {
        page_size: 100,
        page_token: '',
      },
    );
    expect(flaky.pages).toBe(3);
    expect([...flaky.seen].sort()).toEqual(names);
    const broken = await walk(
      '/flaky-tests/list-unhealthy-tests',
      'tests',
      { status: 'BROKEN' },
      {
        page_size: 100,
        page_token: '',
      },
    );
    expect(broken).toEqual({ seen: [], pages: 1 });
    const quarantined = await walk(
      '/flaky-tests/list-quarantined-tests',
      'quarantined_tests',
      {},
      {
        page_size: 100,
        page_token: '',
      },
    );
    expect(quarantined.pages).toBe(3);
    expect(quarantined.seen).toEqual(names);
  });

  it('the documented curl loop (no first token, 50 a page) while CI keeps uploading between its requests', async () => {
    const before = (
      await walk('/flaky-tests/list-unhealthy-tests', 'tests', { status: 'FLAKY' }, { page_size: 100 })
    ).seen;
    const added: string[] = [];
    // Between pages: tests already listed late get flaky on another PR (more PRs impacted moves them to the
    // front of the order), and brand-new flaky tests appear whose names sort first and last.
    const between = async (i: number) => {
      const fresh = [`aaa new flaky ${added.length}`, `zzz new flaky ${added.length}`];
      added.push(...fresh);
      await flakyOnNewPr([...before.slice(-10 * (i + 1)), ...fresh]);
    };
    const unhealthy = await walk(
      '/flaky-tests/list-unhealthy-tests',
      'tests',
      { status: 'FLAKY' },
      { page_size: 50 },
      between,
    );
    expect(new Set(unhealthy.seen).size, 'no test twice').toBe(unhealthy.seen.length);
    expect(
      before.filter((n) => !unhealthy.seen.includes(n)),
      'none lost',
    ).toEqual([]);
    expect(unhealthy.pages).toBe(5);

    const quarantined = await walk(
      '/flaky-tests/list-quarantined-tests',
      'quarantined_tests',
      {},
      { page_size: 50 },
      between,
    );
    expect(new Set(quarantined.seen).size, 'no test twice').toBe(quarantined.seen.length);
    expect(
      names.filter((n) => !quarantined.seen.includes(n)),
      'none lost',
    ).toEqual([]);

    // A new walk, once CI is quiet, sees everything there is now, each once.
    const after = await walk(
      '/flaky-tests/list-unhealthy-tests',
      'tests',
      { status: 'FLAKY' },
      { page_size: 100 },
    );
    expect([...after.seen].sort()).toEqual([...names, ...added].sort());
    const afterQ = await walk(
      '/flaky-tests/list-quarantined-tests',
      'quarantined_tests',
      {},
      { page_size: 100 },
    );
    expect([...afterQ.seen].sort()).toEqual([...names, ...added].sort());
  });
});
