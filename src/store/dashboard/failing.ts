// The dashboard's failing-tests page: tests that failed in a window, read from the failure rollups
// (test_failure_hours, store/uploads/rollups.ts), never from the results.
import { sql } from 'kysely';
import { keyChunks, type Queryable } from '../../db/bulk.ts';
import { hourOf } from '../uploads/rollups.ts';

export interface FailingEntry {
  readonly id: string;
  readonly ordinal: number;
  readonly failures: number;
}

/**
 * Every test with a failure in the hours overlapping [start, end), in list-failing-tests' order (most
 * failures, then name, then id), with its failures in that window: the same rows as rollups.ts
 * `failingInWindow`, with the test's ordinal, in one grouping of the failure rollups. The dashboard
 * keeps the list by the repository's read version (app/dashboard/failing-lists.ts) and pages it.
 */
export async function failingList(
  db: Queryable,
  repoId: string,
  window: { start: number; end: number },
): Promise<FailingEntry[]> {
  const { rows } = await sql<{ id: string; ordinal: number; failures: number }>`select t.id as id,
      t.ordinal as ordinal, f.failures as failures
    from (
      select ordinal, sum(failures) as failures from test_failure_hours
      where repo_id = ${repoId} and hour >= ${hourOf(window.start)} and hour <= ${hourOf(window.end - 1)}
      group by ordinal
    ) f join test_cases t on t.repo_id = ${repoId} and t.ordinal = f.ordinal
    order by f.failures desc, t.name, t.id`.execute(db);
  return rows.map((r) => ({ id: r.id, ordinal: Number(r.ordinal), failures: Number(r.failures) }));
}

export interface LatestFailure {
  /** When the latest failure in the window happened. */
  readonly lastAt: number;
  /** The summary of that failure's group (the rollup keeps one per hour and fingerprint). */
  readonly summary: string;
}

/** Per test ordinal, its latest failure from the hour holding `start` on: a few rollup rows per test. */
export async function latestFailuresOf(
  db: Queryable,
  repoId: string,
  ordinals: readonly number[],
  start: number,
): Promise<Map<number, LatestFailure>> {
  const out = new Map<number, LatestFailure>();
  for (const part of keyChunks(db, ordinals, 100)) {
    const rows = await db
      .selectFrom('test_failure_hours')
      .select(['ordinal', 'last_at', 'summary'])
      .where('repo_id', '=', repoId)
      .where('ordinal', 'in', part)
      .where('hour', '>=', hourOf(start))
      .execute();
    for (const r of rows) {
      const ordinal = Number(r.ordinal);
      const at = Number(r.last_at);
      const seen = out.get(ordinal);
      if (seen === undefined || at > seen.lastAt) out.set(ordinal, { lastAt: at, summary: r.summary ?? '' });
    }
  }
  return out;
}
