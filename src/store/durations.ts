// Test durations from the hourly rollups (test_run_hours' duration_sum_ms and duration_count,
// migration 0023; written at ingest by store/rollups.ts): every attempt with a duration counts, passed,
// failed or skipped, in the UTC hour of its time. Hours are `hourOf(at)` (store/rollups.ts).
import { sql } from 'kysely';
import type { Queryable } from './db.ts';

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
