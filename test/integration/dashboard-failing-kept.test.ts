// The failing-tests page's kept lists (app/dashboard/failing-lists.ts), through the real HTTP stack:
// a list kept by the repository's read version follows an upload (new failures, a new test, a new
// order), retention taking an upload back out of the rollups, the window's hour moving on, and a
// quarantine change (the rows' status is read per page), on both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRetention } from '../../src/app/retention.ts';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { getPage as get, tableRows as rowsOf, signIn } from '../support/dashboard.ts';
import { sweepContext } from '../support/sweep.ts';
import { junitXml, upload } from '../support/upload.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('the failing-tests page keeps its list by the repository’s read version', () => {
  let t: TestApp;
  let token: string;
  let cookie: string;
  let clock = Date.UTC(2026, 10, 10, 12, 30);
  const base = '/acme/repos/github.com/acme/web';
  const failing = async (window = '24h') => {
    const res = await get(t, `${base}/failing?window=${window}`, cookie);
    expect(res.statusCode).toBe(200);
    const total = /<p role="status">([^<]*)<\/p>/.exec(res.body)?.[1] ?? '';
    return { total, rows: rowsOf(res.body).map((r) => [r[0], r[1], r[4]]) };
  };
  const run = async (cases: Parameters<typeof junitXml>[0], sha: string) => {
    const res = await upload(t, token, [{ name: 'r.xml', content: junitXml(cases) }], {
      sha,
      branch: 'feature/x',
      pr: 3,
    });
    expect(res.statusCode, res.body).toBe(200);
  };

  beforeAll(async () => {
    t = await buildTestApp({ MAINLINE_RETENTION_DAYS: '30' }, { now: () => clock });
    token = await t.token('acme');
    await run(
      [
        { name: 'test_a', fail: 'Error: a' },
        { name: 'test_b', fail: 'Error: b' },
      ],
      'a1',
    );
    clock += 60_000;
    await run([{ name: 'test_b', fail: 'Error: b' }], 'a2');
    cookie = await signIn(t, token);
  });
  afterAll(() => t.close());

  it('shows the failures of an upload made after the list was kept', async () => {
    expect(await failing()).toEqual({
      total: '2 tests failed (last 24 hours).',
      rows: [
        ['test_b pkg.Class', '2', 'HEALTHY'],
        ['test_a pkg.Class', '1', 'HEALTHY'],
      ],
    });
    // Read again (kept), then an upload: test_a overtakes test_b and a new test fails.
    expect((await failing()).total).toBe('2 tests failed (last 24 hours).');
    clock += 60_000;
    await run(
      [
        { name: 'test_a', fail: 'Error: a' },
        { name: 'test_a', fail: 'Error: a' },
        { name: 'test_c', fail: 'Error: c' },
      ],
      'a3',
    );
    expect(await failing()).toEqual({
      total: '3 tests failed (last 24 hours).',
      rows: [
        ['test_a pkg.Class', '3', 'HEALTHY'],
        ['test_b pkg.Class', '2', 'HEALTHY'],
        ['test_c pkg.Class', '1', 'HEALTHY'],
      ],
    });
  });

  it('shows a quarantine change on the kept list’s rows', async () => {
    await failing();
    const rows = await t.db.database.db
      .selectFrom('test_cases')
      .select('id')
      .where('name', '=', 'test_c')
      .execute();
    const res = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      {
        repo: REPO,
        org_url_slug: 'acme',
        test_id: rows[0]?.id,
        setting: 'ALWAYS_QUARANTINE',
        reason: 'kept',
      },
      token,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect((await failing()).rows[2]).toEqual(['test_c pkg.Class', '1', 'HEALTHY quarantined']);
  });

  it('moves on with the window’s hours, and drops what retention took out of the rollups', async () => {
    expect((await failing('7d')).total).toBe('3 tests failed (last 7 days).');
    clock += 2 * DAY;
    cookie = await signIn(t, token); // a session lasts 12 hours
    expect(await failing()).toEqual({ total: '0 tests failed (last 24 hours).', rows: [] });
    expect((await failing('7d')).total).toBe('3 tests failed (last 7 days).');
    // Retention as it would run 31 days on: every upload so far is older than 30 days then.
    const report = await applyRetention(
      sweepContext(t, () => clock),
      clock + 31 * DAY,
    );
    expect(report.uploads).toBe(3);
    expect(await failing('7d')).toEqual({ total: '0 tests failed (last 7 days).', rows: [] });
  });
});
