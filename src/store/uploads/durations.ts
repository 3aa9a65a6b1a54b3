// Test durations: from the hourly rollups (test_run_hours' duration_sum_ms and duration_count,
// migration 0023; an upload's folded in with other uploads' after its answer by store/uploads/duration-writes.ts,
// what is listed folded before each read here), every attempt with a duration counting,
// passed, failed or skipped, in the UTC hour of its time (`hourOf(at)`); and the slowest tests and the
// repository's days from the rows store/uploads/duration-writes.ts keeps (migration 0028).
import { sql } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import { foldPendingRuns, foldPendingUploads } from './duration-writes.ts';

/** One test's attempts with a duration in a range of hours. */
export interface TestDurations {
  readonly testId: string;
  readonly name: string;
  readonly ordinal: number;
  /** Attempts that had a duration, and their summed and mean duration (ms). */
  readonly count: number;
  readonly totalMs: number;
  readonly meanMs: number;
}

/**
 * The repository's `limit` slowest tests by mean attempt duration over the hours `fromHour` to
 * `toHour` (both included), slowest first (ties by ordinal). One range of test_run_hours' key (a row
 * per test and hour it ran in), summed per test; only the tests returned are joined to their rows.
 */
export async function durationsByTest(
  db: Queryable,
  repoId: string,
  fromHour: number,
  toHour: number,
  limit: number,
): Promise<TestDurations[]> {
  if (limit <= 0 || toHour < fromHour) return [];
  await foldPendingRuns(db, repoId);
  const { rows } = await sql<{
    id: string;
    name: string;
    ordinal: number;
    total_ms: number | string;
    runs: number | string;
  }>`select t.id, t.name, d.ordinal, d.total_ms, d.runs
    from (
      select ordinal, sum(duration_sum_ms) as total_ms, sum(duration_count) as runs
      from test_run_hours
      where repo_id = ${repoId} and hour >= ${fromHour} and hour <= ${toHour}
      group by ordinal
      having sum(duration_count) > 0
      order by sum(duration_sum_ms) * 1.0 / sum(duration_count) desc, ordinal
      limit ${limit}
    ) d
    join test_cases t on t.repo_id = ${repoId} and t.ordinal = d.ordinal`.execute(db);
  return rows
    .map((r) => {
      const count = Number(r.runs);
      const totalMs = Number(r.total_ms);
      return {
        testId: r.id,
        name: r.name,
        ordinal: Number(r.ordinal),
        count,
        totalMs,
        meanMs: totalMs / count,
      };
    })
    .sort((a, b) => b.meanMs - a.meanMs || a.ordinal - b.ordinal);
}

/** One hour of a test's attempts with a duration. */
export interface HourDurations {
  readonly hour: number;
  readonly count: number;
  readonly totalMs: number;
}

/**
 * One test's durations per hour over `fromHour` to `toHour` (both included), oldest first, hours
 * without an attempt with a duration left out: a duration trend. One range of the
 * `(repo_id, ordinal, hour)` index.
 */
export async function durationTrend(
  db: Queryable,
  repoId: string,
  ordinal: number,
  fromHour: number,
  toHour: number,
): Promise<HourDurations[]> {
  await foldPendingRuns(db, repoId);
  const rows = await db
    .selectFrom('test_run_hours')
    .select(['hour', 'duration_sum_ms', 'duration_count'])
    .where('repo_id', '=', repoId)
    .where('ordinal', '=', ordinal)
    .where('hour', '>=', fromHour)
    .where('hour', '<=', toHour)
    .where('duration_count', '>', 0)
    .orderBy('hour')
    .execute();
  return rows.map((r) => ({
    hour: Number(r.hour),
    count: Number(r.duration_count),
    totalMs: Number(r.duration_sum_ms),
  }));
}

const DAY_MS = 86_400_000;
/** The UTC day (epoch ms / DAY_MS) and the week (Monday 00:00 UTC on) of a time. */
export const dayOf = (at: number): number => Math.floor(at / DAY_MS);
export const weekOf = (at: number): number => Math.floor((dayOf(at) + 3) / 7);

/** A test among the slowest: the mean of its timed attempts in the week of its latest one and the week before. */
export interface SlowTest {
  readonly testId: string;
  readonly name: string;
  readonly classname: string | null;
  readonly ordinal: number;
  readonly meanMs: number;
  readonly count: number;
  /** The week of its latest timed attempt (weekOf). */
  readonly week: number;
}

/**
 * The repository's slowest tests by recent mean, `limit` from `offset`, among those with a timed
 * attempt this week or the week before (`sinceWeek`), once the uploads pending for the means are
 * folded in: the first rows of the index
 * test_duration_means_slowest, then those tests' rows by (repo_id, ordinal).
 */
export async function slowestTests(
  db: Queryable,
  repoId: string,
  sinceWeek: number,
  limit: number,
  offset = 0,
): Promise<SlowTest[]> {
  // Uploads not yet in the means are added first (store/uploads/duration-writes.ts): one probe if none.
  await foldPendingUploads(db, repoId);
  const { rows } = await sql<{
    id: string;
    name: string;
    classname: string | null;
    ordinal: number;
    mean_ms: number | string;
    n: number | string;
    week: number;
  }>`select t.id, t.name, t.classname, m.ordinal, m.mean_ms, m.n, m.week
    from (
      select ordinal, mean_ms, cur_count + prev_count as n, week
      from test_duration_means
      where repo_id = ${repoId} and mean_ms is not null and week >= ${sinceWeek}
      order by mean_ms desc, ordinal
      limit ${limit} offset ${offset}
    ) m
    join test_cases t on t.repo_id = ${repoId} and t.ordinal = m.ordinal
    order by m.mean_ms desc, m.ordinal`.execute(db);
  return rows.map((r) => ({
    testId: r.id,
    name: r.name,
    classname: r.classname,
    ordinal: Number(r.ordinal),
    meanMs: Number(r.mean_ms),
    count: Number(r.n),
    week: Number(r.week),
  }));
}

/** One UTC day of a repository's timed attempts and of failures retried within their CI run. */
export interface RepoTimeDay {
  readonly day: number;
  readonly testMs: number;
  readonly timed: number;
  readonly retriedFailures: number;
  readonly retriedMs: number;
}

/** A repository's days `fromDay` to `toDay` (both included), oldest first, days without a row absent. */
export async function repoTimeDays(
  db: Queryable,
  repoId: string,
  fromDay: number,
  toDay: number,
): Promise<RepoTimeDay[]> {
  const rows = await db
    .selectFrom('repo_time_days')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('day', '>=', fromDay)
    .where('day', '<=', toDay)
    .orderBy('day')
    .execute();
  return rows.map((r) => ({
    day: Number(r.day),
    testMs: Number(r.test_ms),
    timed: Number(r.timed),
    retriedFailures: Number(r.retried_failures),
    retriedMs: Number(r.retried_ms),
  }));
}

/** One test's timed attempts per UTC day, `fromDay` to `toDay`, from its hourly rollup rows; days without one absent. */
export async function dailyDurations(
  db: Queryable,
  repoId: string,
  ordinal: number,
  fromDay: number,
  toDay: number,
): Promise<{ day: number; count: number; totalMs: number }[]> {
  const byDay = new Map<number, { day: number; count: number; totalMs: number }>();
  for (const h of await durationTrend(db, repoId, ordinal, fromDay * 24, toDay * 24 + 23)) {
    const day = Math.floor(h.hour / 24);
    const d = byDay.get(day);
    if (d === undefined) byDay.set(day, { day, count: h.count, totalMs: h.totalMs });
    else {
      d.count += h.count;
      d.totalMs += h.totalMs;
    }
  }
  return [...byDay.values()];
}
