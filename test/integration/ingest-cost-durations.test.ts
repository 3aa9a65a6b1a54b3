// Durations in the hourly rollups (migration 0023, store/uploads/durations.ts): each (hour, test) row of
// test_run_hours sums its attempts' durations (passes from the pass blob, failed and skipped results
// from their rows) and counts those that had one; retention takes an upload's durations back out; the
// migration fills them from the stored rows; durationsByTest and durationTrend read them.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { runHealthSweep } from '../../src/app/health/sweep.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { foldPendingUploads } from '../../src/store/uploads/duration-writes.ts';
import { durationsByTest, durationTrend } from '../../src/store/uploads/durations.ts';
import { decodeDetails, decodeOrdinals } from '../../src/store/uploads/pass-codec.ts';
import { REPO } from '../support/app.ts';
import { migratorOf } from '../support/migrations.ts';
import { repositoryRow } from '../support/reads.ts';
import { upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let clock = Date.UTC(2026, 3, 1, 10, 20, 0);
const t = useTestApp({ env: { MAINLINE_RETENTION_DAYS: '30' }, now: () => clock });

const db = () => t.db.database.db;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/** A report: per test, attempts as [outcome, seconds (null: no time attribute), minutes after now]. */
function report(
  tests: Record<string, [outcome: 'pass' | 'fail' | 'skip', seconds: number | null, min: number][]>,
) {
  const body = Object.entries(tests)
    .flatMap(([name, attempts]) =>
      attempts.map(([outcome, seconds, min]) => {
        const attrs = `name="${name}" classname="pkg.Dur" timestamp="${iso(clock + min * 60_000)}"${seconds === null ? '' : ` time="${seconds}"`}`;
        if (outcome === 'pass') return `<testcase ${attrs}/>`;
        if (outcome === 'skip') return `<testcase ${attrs}><skipped/></testcase>`;
        return `<testcase ${attrs}><failure message="boom">boom</failure></testcase>`;
      }),
    )
    .join('');
  return `<testsuites><testsuite name="dur">${body}</testsuite></testsuites>`;
}

let commit = 0;
async function send(tests: Parameters<typeof report>[0]): Promise<void> {
  commit++;
  const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: report(tests) }], {
    sha: `d00d${commit}`,
  });
  expect(res.statusCode, res.body).toBe(200);
}

/**
 * test_run_hours' durations as stored once the pending uploads are folded in: `hour|ordinal|sum|count`,
 * sorted (rows without any left out).
 */
async function stored(): Promise<string[]> {
  for (const { id } of await db().selectFrom('repositories').select('id').execute())
    await foldPendingUploads(db(), id);
  const rows = await db().selectFrom('test_run_hours').selectAll().execute();
  return rows
    .filter((r) => Number(r.duration_count) !== 0 || Number(r.duration_sum_ms) !== 0)
    .map(
      (r) =>
        `${Number(r.hour)}|${Number(r.ordinal)}|${Number(r.duration_sum_ms)}|${Number(r.duration_count)}`,
    )
    .sort();
}

/** The same from the raw rows: results' durations and the pass blobs' durations. */
async function recomputed(): Promise<string[]> {
  const sums = new Map<string, [number, number]>();
  const add = (at: number, ordinal: number, ms: number) => {
    const key = `${Math.floor(at / HOUR)}|${ordinal}`;
    const sum = sums.get(key) ?? [0, 0];
    sums.set(key, [sum[0] + ms, sum[1] + 1]);
  };
  const results = await db()
    .selectFrom('test_results as r')
    .innerJoin('test_cases as c', 'c.id', 'r.test_case_id')
    .select(['r.at', 'r.duration_ms', 'c.ordinal'])
    .execute();
  for (const r of results)
    if (r.duration_ms !== null) add(Number(r.at), Number(r.ordinal), Number(r.duration_ms));
  for (const u of await db().selectFrom('upload_passes').selectAll().execute()) {
    const set = decodeOrdinals(u.ordinals, Number(u.at_min), Number(u.at_max));
    const details = decodeDetails(u.details, Number(u.count));
    set.ordinals.forEach((o, i) => {
      const ms = details.durations[i] as number;
      if (ms >= 0) add(Number(u.at_min) + (details.atOffsets[i] as number), o, ms);
    });
  }
  return [...sums].map(([key, [ms, n]]) => `${key}|${ms}|${n}`).sort();
}

async function repoId(): Promise<string> {
  return (await repositoryRow(t, REPO)).id;
}

describe('durations in the hourly rollups', () => {
  it('sum every attempt with a duration, come back out with retention, and are filled by migration 0023', async () => {
    const start = clock;
    await send({
      slow: [
        ['fail', 2.5, 0],
        ['pass', 1.5, 1],
      ],
      fast: [['pass', 0.01, 0]],
      skipper: [['skip', 0, 0]],
      untimed: [['pass', null, 0]],
      late: [['pass', 0.3, 50]],
    });
    expect(await stored()).toEqual(await recomputed());
    clock += 2 * DAY;
    await send({ slow: [['pass', 3, 0]], fast: [['fail', 0.02, 0]] });
    const now = await stored();
    expect(now).toEqual(await recomputed());
    expect(now.length).toBeGreaterThan(5);

    const id = await repoId();
    const from = Math.floor(start / HOUR);
    const to = Math.floor(clock / HOUR);
    const slowest = await durationsByTest(db(), id, from, to, 3);
    expect(slowest.map((d) => [d.name, d.count, d.totalMs])).toEqual([
      ['slow', 3, 7000],
      ['late', 1, 300],
      ['fast', 2, 30],
    ]);
    expect(slowest[0]?.meanMs).toBeCloseTo(7000 / 3);
    // A window of the first upload's hour only.
    expect((await durationsByTest(db(), id, from, from, 10)).map((d) => [d.name, d.totalMs])).toEqual([
      ['slow', 4000],
      ['fast', 10],
      ['skipper', 0],
    ]);
    const slow = slowest[0]?.ordinal as number;
    expect(await durationTrend(db(), id, slow, from, to)).toEqual([
      { hour: from, count: 2, totalMs: 4000 },
      { hour: to, count: 1, totalMs: 3000 },
    ]);

    // Migration 0023 fills the durations from the stored rows.
    const migrator = migratorOf(db());
    expect((await migrator.migrateTo('0022_queue_rows')).error).toBeUndefined();
    const { rows } = await sql<{ n: number }>`select count(*) as n from test_run_hours`.execute(db());
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    await migrateToLatest(t.db.database);
    expect(await stored()).toEqual(now);

    // Retention deletes the first upload and takes its durations out.
    clock += 29 * DAY;
    const swept = await runHealthSweep({ db: db(), config: t.config, now: () => clock, caches: t.caches });
    expect(swept.prunedUploads).toBe(1);
    const left = await stored();
    expect(left).toEqual(await recomputed());
    expect(left.length).toBe(2);
  });
});
