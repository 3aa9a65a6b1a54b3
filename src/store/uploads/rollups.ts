// Test-health rollups (migration 0018): per repository, UTC hour and test (its ordinal) the attempts
// that passed, failed and were skipped (`test_run_hours`), and per test, hour and failure fingerprint
// the failures, the latest one's time and the least summary (`test_failure_hours`). Written in the
// ingest transaction from what the upload stores and taken back out when retention deletes an upload
// (store/uploads/rollups-write.ts); read here, by get-test-details, list-failing-tests and the dashboard's
// test page instead of the results and pass blobs. An upload's counts reach `test_run_hours` after its
// answer, folded with other uploads' (store/uploads/duration-writes.ts foldPendingRuns): every reader
// of that table here folds the listed uploads' counts first (not the slowest tests' means). Windows are whole hours: a window starting inside
// an hour counts that whole hour (docs/design.md, "Test-health rollups").
import { sql } from 'kysely';
import { keyChunks, type Queryable } from '../../db/bulk.ts';
import { foldPendingRuns } from './duration-writes.ts';

export const HOUR_MS = 3_600_000;

/** The hour (start / HOUR_MS) an attempt at `at` counts in. */
export const hourOf = (at: number): number => Math.floor(at / HOUR_MS);

/** Attempts that ran (passed or failed) and failed. */
export interface RunCounts {
  ran: number;
  failed: number;
}

/**
 * Attempts that ran and failed since `since` and since `recent` (≥ since), per test
 * ordinal, from the hours holding those times on (attempts are at most an hour ahead of an upload, so
 * up to two hours after `now`). Tests without attempts are absent.
 */
export async function runCountsOf(
  db: Queryable,
  repoId: string,
  ordinals: readonly number[],
  window: { since: number; recent: number; now: number },
): Promise<Map<number, { since: RunCounts; recent: RunCounts }>> {
  const out = new Map<number, { since: RunCounts; recent: RunCounts }>();
  if (ordinals.length === 0) return out;
  await foldPendingRuns(db, repoId);
  const recent = hourOf(window.recent);
  // One range of hours per test on test_run_hours_by_test (migration 0021), not a probe per (hour, test).
  for (const part of keyChunks(db, ordinals, 100)) {
    const rows = await db
      .selectFrom('test_run_hours')
      .select(['hour', 'ordinal', 'passed', 'failed'])
      .where('repo_id', '=', repoId)
      .where('ordinal', 'in', part)
      .where('hour', '>=', hourOf(window.since))
      .where('hour', '<=', hourOf(window.now + 2 * HOUR_MS))
      .execute();
    for (const r of rows) {
      const ordinal = Number(r.ordinal);
      let e = out.get(ordinal);
      if (e === undefined) {
        e = { since: { ran: 0, failed: 0 }, recent: { ran: 0, failed: 0 } };
        out.set(ordinal, e);
      }
      const ran = Number(r.passed) + Number(r.failed);
      const failed = Number(r.failed);
      e.since.ran += ran;
      e.since.failed += failed;
      if (Number(r.hour) >= recent) {
        e.recent.ran += ran;
        e.recent.failed += failed;
      }
    }
  }
  return out;
}

export interface FailureGroupRow {
  /** '' for failures without one. */
  fingerprint: string;
  summary: string;
  occurrences: number;
  last_at: number;
}

/**
 * Each test's failures from the hour holding `since` on, grouped by fingerprint, most frequent
 * first (then the most recent, then by fingerprint), at most `limit` groups per test; by ordinal.
 */
export async function failureGroupsOf(
  db: Queryable,
  repoId: string,
  ordinals: readonly number[],
  since: number,
  limit: number,
): Promise<Map<number, FailureGroupRow[]>> {
  const out = new Map<number, FailureGroupRow[]>();
  for (const part of keyChunks(db, ordinals, 400)) {
    const rows = await db
      .selectFrom('test_failure_hours')
      .select((eb) => [
        'ordinal',
        'fingerprint',
        eb.fn.min('summary').as('summary'),
        eb.fn.sum<number>('failures').as('occurrences'),
        eb.fn.max('last_at').as('last_at'),
      ])
      .where('repo_id', '=', repoId)
      .where('ordinal', 'in', part)
      .where('hour', '>=', hourOf(since))
      .groupBy(['ordinal', 'fingerprint'])
      .execute();
    for (const r of rows) {
      const group = {
        fingerprint: r.fingerprint,
        summary: r.summary ?? '',
        occurrences: Number(r.occurrences),
        last_at: Number(r.last_at),
      };
      const ordinal = Number(r.ordinal);
      const groups = out.get(ordinal);
      if (groups === undefined) out.set(ordinal, [group]);
      else groups.push(group);
    }
  }
  for (const [ordinal, groups] of out) out.set(ordinal, groups.sort(byFrequency).slice(0, limit));
  return out;
}

/** Most frequent first, then the most recent, then by fingerprint. */
function byFrequency(a: FailureGroupRow, b: FailureGroupRow): number {
  return (
    b.occurrences - a.occurrences ||
    b.last_at - a.last_at ||
    (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0)
  );
}

/** One test's attempts that ran and failed in two windows, and its most frequent failure groups. */
export interface TestRollups {
  readonly since: RunCounts;
  readonly recent: RunCounts;
  readonly groups: FailureGroupRow[];
}

/**
 * What runCountsOf and failureGroupsOf give for one test, in one statement (a range of each rollup
 * table by the test's key): get-test-details' rates and failure groups in one round trip. The
 * statement also tells whether uploads wait to be folded into the hour rows; if so they are
 * folded and the test read again.
 */
export async function testRollupsOf(
  db: Queryable,
  repoId: string,
  ordinal: number,
  window: { since: number; recent: number; now: number; groupsSince: number; groups: number },
  folded = false,
): Promise<TestRollups> {
  const { rows } = await sql<{
    kind: number;
    hour: number;
    a: number;
    b: number;
    fingerprint: string;
    summary: string | null;
    last_at: number;
  }>`select 0 as kind, hour, passed as a, failed as b, '' as fingerprint, null as summary, 0 as last_at
      from test_run_hours
      where repo_id = ${repoId} and ordinal = ${ordinal}
        and hour >= ${hourOf(window.since)} and hour <= ${hourOf(window.now + 2 * HOUR_MS)}
    union all
    select 1 as kind, 0 as hour, sum(failures) as a, 0 as b, fingerprint, min(summary) as summary,
        max(last_at) as last_at
      from test_failure_hours
      where repo_id = ${repoId} and ordinal = ${ordinal} and hour >= ${hourOf(window.groupsSince)}
      group by fingerprint
    union all
    select 2 as kind, 0 as hour, 0 as a, 0 as b, '' as fingerprint, null as summary, 0 as last_at
      from (select upload_id from duration_means_pending
        where repo_id = ${repoId} and runs_pending = 1 limit 1) p`.execute(db);
  if (!folded && rows.some((r) => Number(r.kind) === 2)) {
    await foldPendingRuns(db, repoId);
    return testRollupsOf(db, repoId, ordinal, window, true);
  }
  const since = { ran: 0, failed: 0 };
  const recent = { ran: 0, failed: 0 };
  const groups: FailureGroupRow[] = [];
  const recentHour = hourOf(window.recent);
  for (const r of rows) {
    if (Number(r.kind) === 2) continue;
    if (Number(r.kind) === 1) {
      groups.push({
        fingerprint: r.fingerprint,
        summary: r.summary ?? '',
        occurrences: Number(r.a),
        last_at: Number(r.last_at),
      });
      continue;
    }
    const failed = Number(r.b);
    const ran = Number(r.a) + failed;
    since.ran += ran;
    since.failed += failed;
    if (Number(r.hour) >= recentHour) {
      recent.ran += ran;
      recent.failed += failed;
    }
  }
  return { since, recent, groups: groups.sort(byFrequency).slice(0, window.groups) };
}

/**
 * A string that changes whenever a repository's rollups may have: its health_version (every ingest
 * bumps it in the transaction that adds to the rollups), and its oldest upload's time and how many
 * uploads have that time (retention takes uploads out of the rollups oldest first and bumps
 * nothing). One statement, two probes of uploads_repo_created. Undefined for an unknown repository.
 */
export async function readVersion(db: Queryable, repoId: string): Promise<string | undefined> {
  const { rows } = await sql<{ v: number; oldest: number | null; n: number }>`select
      r.health_version as v, o.oldest as oldest,
      (select count(*) from uploads u where u.repo_id = r.id and u.created_at = o.oldest) as n
    from repositories r, (select min(created_at) as oldest from uploads where repo_id = ${repoId}) o
    where r.id = ${repoId}`.execute(db);
  const row = rows[0];
  return row === undefined ? undefined : `${Number(row.v)}.${row.oldest ?? ''}.${Number(row.n)}`;
}

export interface DailyOutcomeRow {
  /** Day index from the `since` day start. */
  day: number;
  passed: number;
  /** Failures of a test that was not quarantined, and of one that was (they did not fail CI). */
  failed: number;
  quarantined: number;
  skipped: number;
}

/** One test's attempts per UTC day for `days` days from `since` (a day start), days with none absent. */
export async function dailyOutcomesOf(
  db: Queryable,
  repoId: string,
  ordinal: number,
  since: number,
  days: number,
): Promise<DailyOutcomeRow[]> {
  const byDay = new Map<number, DailyOutcomeRow>();
  await foldPendingRuns(db, repoId);
  const rows = await db
    .selectFrom('test_run_hours')
    .select(['hour', 'passed', 'failed', 'failed_quarantined', 'skipped'])
    .where('repo_id', '=', repoId)
    .where('ordinal', '=', ordinal)
    .where('hour', '>=', hourOf(since))
    .where('hour', '<=', hourOf(since + days * 24 * HOUR_MS - 1))
    .execute();
  for (const r of rows) {
    const d = Math.floor((Number(r.hour) * HOUR_MS - since) / (24 * HOUR_MS));
    let row = byDay.get(d);
    if (row === undefined) {
      row = { day: d, passed: 0, failed: 0, quarantined: 0, skipped: 0 };
      byDay.set(d, row);
    }
    row.passed += Number(r.passed);
    row.failed += Number(r.failed) - Number(r.failed_quarantined);
    row.quarantined += Number(r.failed_quarantined);
    row.skipped += Number(r.skipped);
  }
  return [...byDay.values()].sort((a, b) => a.day - b.day);
}

/**
 * The tests with a failure in the hours overlapping [start, end) and their failures, with their
 * names (list-failing-tests' order: most failures, then name, then id), as SQL to select from.
 */
export function failingInWindow(repoId: string, start: number, end: number) {
  return sql`select t.id as id, f.failures as failures, t.name as name
    from (
      select ordinal, sum(failures) as failures from test_failure_hours
      where repo_id = ${repoId} and hour >= ${hourOf(start)} and hour <= ${hourOf(end - 1)}
      group by ordinal
    ) f join test_cases t on t.repo_id = ${repoId} and t.ordinal = f.ordinal`;
}
