// Issue 28, first part, through the real HTTP stack: the failing-tests page (from the failure
// rollups), and a queue page that leads with the queue (PRs in order, runs with full ids, settings
// folded and last, GitHub-only settings shown as having no effect on plain git, seconds where times
// are close, a reload script allowed by hash in the page's CSP), and a run page whose "Depends on
// PRs" says when such a PR merged.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { getPage as get, tableRows as rowsOf, signIn } from '../support/dashboard.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { storedQueueRuns } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('the failing-tests page', () => {
  let t: TestApp;
  let token: string;
  let cookie: string;
  let clock = Date.UTC(2026, 10, 10, 12, 30);
  const base = '/acme/repos/github.com/acme/web';

  beforeAll(async () => {
    t = await buildTestApp({}, { now: () => clock });
    token = await t.token('acme');
    const run = async (cases: Parameters<typeof junitXml>[0], sha: string, branch = 'feature/x') => {
      const res = await upload(t, token, [{ name: 'r.xml', content: junitXml(cases) }], {
        sha,
        branch,
        pr: 3,
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    // Three days ago: test_old fails twice (only the 7-day window holds it).
    await run([{ name: 'test_old', fail: 'Error: old failure' }], 'a1');
    await run([{ name: 'test_old', fail: 'Error: old failure' }], 'a2');
    clock += 3 * DAY;
    // Now: test_db fails 3 times (the last message differs), test_net once, test_ok passes.
    await run([{ name: 'test_db', fail: 'Error: connection refused' }, { name: 'test_ok' }], 'b1');
    clock += 60_000;
    await run(
      [
        { name: 'test_db', fail: 'Error: connection refused' },
        { name: 'test_net', fail: 'ETIMEDOUT' },
      ],
      'b2',
    );
    clock += 60_000;
    await run([{ name: 'test_db', fail: 'TypeError: db is undefined' }], 'b3');
    // 55 more tests failing once, to fill a second page of the 7-day window.
    await run(
      Array.from({ length: 55 }, (_, i) => ({
        name: `test_many_${String(i).padStart(2, '0')}`,
        fail: 'boom',
      })),
      'c1',
    );
    cookie = await signIn(t, token);
  });
  afterAll(() => t.close());

  it('lists the tests that failed in the last 24 hours, most failures first, with the latest failure', async () => {
    const res = await get(t, `${base}/failing`, cookie);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Failing tests · github.com/acme/web</h1>');
    expect(res.body).toContain('57 tests failed (last 24 hours).');
    const rows = rowsOf(res.body);
    expect(rows).toHaveLength(50);
    expect(rows[0]).toEqual([
      'test_db pkg.Class',
      '3',
      '2026-11-13 12:32 UTC',
      'TypeError: db is undefined',
      'HEALTHY',
    ]);
    expect(rows.map((r) => r[0])).not.toContain('test_old pkg.Class');
    expect(rows.map((r) => r[0])).not.toContain('test_ok pkg.Class');
    expect(res.body).toMatch(/<a class="test-name" href="[^"]+\/tests\/[0-9a-f-]+">test_db<\/a>/);
    expect(res.body).toContain('Page 1 of 2');
    expect(res.headers['content-security-policy']).not.toContain('script-src');
    expect(res.body).not.toContain('<script');
  });

  it('switches to 7 days and pages with links that keep the window', async () => {
    const first = await get(t, `${base}/failing?window=7d`, cookie);
    expect(first.body).toContain('58 tests failed (last 7 days).');
    expect(first.body).toContain(`href="${base}/failing?window=7d&amp;page=2" rel="next"`);
    expect(rowsOf(first.body)[1]?.slice(0, 4)).toEqual([
      'test_old pkg.Class',
      '2',
      '2026-11-10 12:30 UTC',
      'Error: old failure',
    ]);
    const second = await get(t, `${base}/failing?window=7d&page=2`, cookie);
    expect(second.body).toContain('Page 2 of 2');
    expect(rowsOf(second.body).map((r) => r[0])).toEqual([
      ...Array.from({ length: 7 }, (_, i) => `test_many_${48 + i} pkg.Class`),
      'test_net pkg.Class',
    ]);
  });

  it('is linked from the repository page, and is a page of the caller’s organization only', async () => {
    expect((await get(t, base, cookie)).body).toContain(`href="${base}/failing"`);
    const other = await signIn(t, await t.token('globex'));
    const theirs = await get(t, `${base}/failing`, other);
    expect(theirs.statusCode).toBe(404);
    const unknown = await get(t, '/globex/repos/github.com/acme/web/failing', other);
    expect(theirs.body).toBe(unknown.body);
    const signedOut = await get(t, `${base}/failing`);
    expect(signedOut.statusCode).toBe(303);
    expect(signedOut.headers.location).toBe(`/login?next=${encodeURIComponent(`${base}/failing`)}`);
  });
});

describe('the queue page leads with the queue', () => {
  let s: GitScenario;
  let cookie: string;
  const base = '/acme/repos/github.com/acme/web';

  beforeAll(async () => {
    s = await GitScenario.create({ directMergeMode: 'off', concurrency: 2 });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Add b');
    await s.openPr(3, { 'c.txt': 'c\n' }, 'Add c');
    await s.submit(1);
    await s.submit(2);
    await s.settle();
    await s.ci('success', 1);
    await s.settle();
    expect((await s.pr(1)).state).toBe('merged');
    await s.submit(3);
    await s.settle();
    cookie = await signIn(s.t, s.token);
  });
  afterAll(() => s.close());

  it('shows the PRs, then the runs with their full ids, then the settings folded', async () => {
    const res = await get(s.t, `${base}/queues/main`, cookie);
    expect(res.statusCode).toBe(200);
    const body = res.body;
    const at = (text: string) => {
      const i = body.indexOf(text);
      expect(i, text).toBeGreaterThan(-1);
      return i;
    };
    expect(at('In the queue (2)')).toBeLessThan(at('<h2>Test runs</h2>'));
    expect(at('<h2>Test runs</h2>')).toBeLessThan(at('<h2>Recently finished</h2>'));
    expect(at('<h2>Recently finished</h2>')).toBeLessThan(at('<details id="queue-settings">'));
    const queued = rowsOf(body);
    expect(queued.map((r) => r.slice(0, 3))).toEqual([
      ['1', '#2 Add b', expect.stringMatching(/^testing testing in run [0-9a-f-]{36}-\d+$/)],
      ['2', '#3 Add c', expect.stringMatching(/^testing testing in run [0-9a-f-]{36}-\d+$/)],
    ]);
    expect(queued[0]?.[3]).toMatch(/^\d+ (s|min) since 2026-/);
    const ids = [...body.matchAll(/<a class="mono run-id" href="[^"]+\/runs\/([^"]+)">([^<]+)<\/a>/g)];
    expect(ids.length).toBeGreaterThanOrEqual(2);
    for (const m of ids) expect(m[2]).toBe(decodeURIComponent(m[1] ?? ''));
    expect(body).not.toContain('…');
  });

  it('says which settings do nothing on plain git instead of "yes"', async () => {
    const body = (await get(s.t, `${base}/queues/main`, cookie)).body;
    for (const label of ['Comments', 'Commands', 'Status check', 'Draft PRs for test branches']) {
      expect(body).toMatch(
        new RegExp(`<dt>${label}</dt><dd><span class="muted">no effect on plain git</span>`),
      );
    }
    expect(body).toContain('<dt>Forge</dt><dd>plain git (the built-in forge)</dd>');
    expect(body).toContain('<dt>Concurrency</dt><dd>2</dd>');
  });

  it('shows seconds when times on the page fall in the same minute', async () => {
    const body = (await get(s.t, `${base}/queues/main`, cookie)).body;
    // #1 merged a few seconds after #2 and #3 started testing: same minute, different instants.
    const [queued] = rowsOf(body);
    expect(queued?.[3]).toMatch(/ since 2026-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  });

  it('reloads itself every 15 s by a script the CSP allows by its hash, and without scripts by a meta refresh', async () => {
    const res = await get(s.t, `${base}/queues/main`, cookie);
    const script = res.body.match(/<script>([\s\S]*?)<\/script>/)?.[1];
    expect(script).toContain('location.reload()');
    expect(script).toContain('scrollTo(0,v.y)');
    const hash = createHash('sha256')
      .update(script ?? '')
      .digest('base64');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain(`script-src 'sha256-${hash}'`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.body).toContain('<noscript><meta http-equiv="refresh" content="15"></noscript>');
    // Other pages still run no script at all.
    const repoPage = await get(s.t, base, cookie);
    expect(repoPage.headers['content-security-policy']).not.toContain('script-src');
  });

  it('run page: a PR the run depended on that has merged since says so, with the full run id', async () => {
    const run = (await storedQueueRuns(s.t)).find((r) => r.tested.includes(2));
    expect(run?.dependsOn).toEqual([1]);
    const res = await get(s.t, `${base}/queues/main/runs/${encodeURIComponent(run?.id ?? '')}`, cookie);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(`<h1>Test run ${run?.id}</h1>`);
    expect(res.body).toMatch(
      /<dt>Depends on PRs<\/dt><dd><a href="[^"]+\/prs\/1">#1<\/a> <span class="hint">\(merged since, <time/,
    );
  });
});
