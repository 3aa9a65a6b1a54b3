// The overview's "Failing in 24 h" figure, through the real HTTP stack on both engines: read from the
// kept 24-hour failing-tests window when it is on the current hours (app/dashboard/overview.ts), grouped
// from the failure rollups otherwise, and equal to the failing-tests page's count either way: before
// any window is kept, after an upload adds failures to a kept one, and once the window has moved on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { getPage as get, signIn } from '../support/dashboard.ts';
import { junitXml, upload } from '../support/upload.ts';

const HOUR = 3_600_000;

describe('the overview counts the tests failing in the last 24 hours', () => {
  let t: TestApp;
  let token: string;
  let cookie: string;
  let clock = Date.UTC(2026, 10, 10, 12, 30);
  const base = '/acme/repos/github.com/acme/web';
  const overviewCount = async () => {
    const res = await get(t, '/acme', cookie);
    expect(res.statusCode).toBe(200);
    const m = new RegExp(`<dt>Failing in 24 h</dt><dd><a href="${base}/failing">(\\d+)</a></dd>`).exec(
      res.body,
    );
    expect(m, res.body).not.toBeNull();
    return Number(m?.[1]);
  };
  const pageCount = async () => {
    const res = await get(t, `${base}/failing?window=24h`, cookie);
    expect(res.statusCode).toBe(200);
    const total = /<p role="status">(\d+) tests? failed/.exec(res.body)?.[1];
    return total === undefined ? 0 : Number(total);
  };
  const run = async (cases: Parameters<typeof junitXml>[0], sha: string) => {
    const res = await upload(t, token, [{ name: 'r.xml', content: junitXml(cases) }], {
      sha,
      branch: 'main',
    });
    expect(res.statusCode, res.body).toBe(200);
  };

  beforeAll(async () => {
    t = await buildTestApp({ MAINLINE_RETENTION_DAYS: '30' }, { now: () => clock });
    token = await t.token('acme');
    await run(
      [{ name: 'test_a', fail: 'Error: a' }, { name: 'test_b', fail: 'Error: b' }, { name: 'test_ok' }],
      'a1',
    );
    cookie = await signIn(t, token);
  });
  afterAll(() => t.close());

  it('agrees with the failing-tests page through uploads and the hours moving on', async () => {
    // Nothing viewed yet: the figure is right whether or not a window is kept.
    expect(await overviewCount()).toBe(2);
    expect(await pageCount()).toBe(2);
    // A kept window, then an upload with a new failing test: the kept count follows it.
    clock += 60_000;
    await run(
      [
        { name: 'test_c', fail: 'Error: c' },
        { name: 'test_a', fail: 'Error: a' },
      ],
      'a2',
    );
    expect(await overviewCount()).toBe(3);
    expect(await pageCount()).toBe(3);
    // 23 hours on, the first two uploads' failures are still in the window; a third adds test_d.
    clock += 23 * HOUR;
    cookie = await signIn(t, token);
    expect(await overviewCount()).toBe(3);
    await run([{ name: 'test_d', fail: 'Error: d' }], 'a3');
    expect(await overviewCount()).toBe(4);
    expect(await pageCount()).toBe(4);
    // Two hours more: the hour of the first two uploads has left the window, the third's has not.
    clock += 2 * HOUR;
    cookie = await signIn(t, token);
    expect(await overviewCount()).toBe(1);
    expect(await pageCount()).toBe(1);
    expect(await overviewCount()).toBe(1);
  });
});
