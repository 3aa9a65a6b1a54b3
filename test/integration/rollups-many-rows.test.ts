// test_run_hours after uploads of more tests than one SQLite statement writes (1,000 rows): every
// test's row holds exactly its attempts, failures and skips scattered among passes, on a first upload
// (rows inserted) and a second one (rows added to), each folded in on its own.
import { describe, expect, it } from 'vitest';
import { foldPendingUploads } from '../../src/store/uploads/duration-writes.ts';
import { repositoryRow } from '../support/reads.ts';
import { upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const HOUR = 3_600_000;
const clock = Date.UTC(2026, 2, 1, 9, 17, 23);
// No idle fold: each upload is folded by the test.
const t = useTestApp({ env: { MAINLINE_FOLD_IDLE_MS: '0' }, now: () => clock });
const TESTS = 2_600;

/** Test k's outcome in upload `u`: failures and skips scattered, most tests passing. */
function outcome(k: number, u: number): 'pass' | 'fail' | 'skip' {
  if ((k + u) % 37 === 5) return 'fail';
  if ((k * 3 + u) % 53 === 2) return 'skip';
  return 'pass';
}

function report(u: number): string {
  const stamp = new Date(clock - 60_000).toISOString().slice(0, 19);
  const cases: string[] = [];
  for (let k = 0; k < TESTS; k++) {
    const attrs = `name="t${k}" classname="pkg.Many" timestamp="${stamp}" time="0.0${k % 10}"`;
    const o = outcome(k, u);
    if (o === 'pass') cases.push(`<testcase ${attrs}/>`);
    else if (o === 'skip') cases.push(`<testcase ${attrs}><skipped/></testcase>`);
    else cases.push(`<testcase ${attrs}><failure message="boom ${k}">boom ${k}</failure></testcase>`);
  }
  return `<testsuites><testsuite name="many">${cases.join('')}</testsuite></testsuites>`;
}

describe('test_run_hours with more rows than one statement', () => {
  it('holds each test’s passes, failures, skips and durations after a first and a second upload', async () => {
    const repo = { host: 'github.com', owner: 'acme', name: 'many-rows' };
    for (let u = 0; u < 2; u++) {
      const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: report(u) }], {
        repo,
        sha: `feed${u}`,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(await foldPendingUploads(t.db.database.db, (await repositoryRow(t, repo)).id)).toBe(1);
    }
    const db = t.db.database.db;
    const rows = await db
      .selectFrom('test_run_hours as h')
      .innerJoin('test_cases as c', (j) =>
        j.onRef('c.repo_id', '=', 'h.repo_id').onRef('c.ordinal', '=', 'h.ordinal'),
      )
      .select([
        'c.name',
        'h.hour',
        'h.passed',
        'h.failed',
        'h.failed_quarantined',
        'h.skipped',
        'h.duration_sum_ms',
        'h.duration_count',
      ])
      .execute();
    expect(rows.length).toBe(TESTS);
    const hour = Math.floor((clock - 60_000) / HOUR);
    const kinds = new Set<string>();
    for (const r of rows) {
      const k = Number(r.name.slice(1));
      const want = { passed: 0, failed: 0, skipped: 0 };
      for (let u = 0; u < 2; u++) {
        const o = outcome(k, u);
        if (o === 'pass') want.passed++;
        else if (o === 'fail') want.failed++;
        else want.skipped++;
        kinds.add(o);
      }
      const got = {
        hour: Number(r.hour),
        passed: Number(r.passed),
        failed: Number(r.failed),
        quarantined: Number(r.failed_quarantined),
        skipped: Number(r.skipped),
        ms: Number(r.duration_sum_ms),
        timed: Number(r.duration_count),
      };
      expect(got, r.name).toEqual({ hour, ...want, quarantined: 0, ms: 20 * (k % 10), timed: 2 });
    }
    expect([...kinds].sort()).toEqual(['fail', 'pass', 'skip']);
  }, 60_000);
});
