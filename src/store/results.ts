import { type Insertable, PostgresAdapter, sql } from 'kysely';
import { chunked, type Queryable } from './db.ts';
import type { TestResultsTable } from './schema.ts';

export type NewResult = Insertable<TestResultsTable>;

export async function insertResults(db: Queryable, rows: readonly NewResult[]): Promise<void> {
  for (const part of chunked(rows, 1000)) await db.insertInto('test_results').values(part).execute();
}

/** An attempt as the health monitors read it. */
export interface AttemptRow {
  test_case_id: string;
  at: number;
  branch: string;
  commit_sha: string;
  pr_number: number | null;
  outcome: string;
  upload_id: string;
  retry_index: number;
}

/**
 * The attempts of these tests that the monitors need: every attempt on the given commits (for
 * pass-on-retry, however old) and every attempt since `since` (for the windowed monitors).
 */
export async function loadAttempts(
  db: Queryable,
  testIds: readonly string[],
  scope: { commitShas: readonly string[]; since: number | undefined },
): Promise<AttemptRow[]> {
  if (scope.commitShas.length === 0 && scope.since === undefined) return [];
  const out: AttemptRow[] = [];
  for (const part of chunked(testIds, 400)) {
    const rows = await db
      .selectFrom('test_results')
      .select([
        'test_case_id',
        'at',
        'branch',
        'commit_sha',
        'pr_number',
        'outcome',
        'upload_id',
        'retry_index',
      ])
      .where('test_case_id', 'in', part)
      .where((eb) => {
        const ors = [];
        if (scope.commitShas.length > 0) ors.push(eb('commit_sha', 'in', [...scope.commitShas]));
        if (scope.since !== undefined) ors.push(eb('at', '>=', scope.since));
        return eb.or(ors);
      })
      .execute();
    out.push(...rows);
  }
  return out;
}

/** Distinct PRs with a failing attempt since `since`, per test. */
export async function prsImpacted(
  db: Queryable,
  testIds: readonly string[],
  since: number,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const part of chunked(testIds, 400)) {
    const rows = await db
      .selectFrom('test_results')
      .select((eb) => ['test_case_id', eb.fn.count<number>('pr_number').distinct().as('n')])
      .where('test_case_id', 'in', part)
      .where('at', '>=', since)
      .where('outcome', '=', 'failed')
      .where('pr_number', 'is not', null)
      .groupBy('test_case_id')
      .execute();
    for (const r of rows) counts.set(r.test_case_id, Number(r.n));
  }
  return counts;
}

/** Attempts that ran (passed or failed) and failed, since `since`, for one test. */
export async function attemptCounts(
  db: Queryable,
  testId: string,
  since: number,
): Promise<{ ran: number; failed: number }> {
  const row = await db
    .selectFrom('test_results')
    .select((eb) => [
      eb.fn.countAll<number>().as('ran'),
      eb.fn.sum<number>(eb.case().when('outcome', '=', 'failed').then(1).else(0).end()).as('failed'),
    ])
    .where('test_case_id', '=', testId)
    .where('at', '>=', since)
    .where('outcome', '!=', 'skipped')
    .executeTakeFirstOrThrow();
  return { ran: Number(row.ran), failed: Number(row.failed ?? 0) };
}

export interface FailureGroupRow {
  fingerprint: string;
  summary: string;
  occurrences: number;
  last_at: number;
}

/** A test's failures since `since`, grouped by fingerprint, most frequent first. */
export async function failureGroups(
  db: Queryable,
  testId: string,
  since: number,
  limit: number,
): Promise<FailureGroupRow[]> {
  const rows = await db
    .selectFrom('test_results')
    .select((eb) => [
      'failure_fingerprint as fingerprint',
      eb.fn.min('failure_summary').as('summary'),
      eb.fn.countAll<number>().as('occurrences'),
      eb.fn.max('at').as('last_at'),
    ])
    .where('test_case_id', '=', testId)
    .where('outcome', '=', 'failed')
    .where('at', '>=', since)
    .groupBy('failure_fingerprint')
    .orderBy('occurrences', 'desc')
    .orderBy('last_at', 'desc')
    .orderBy('failure_fingerprint')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    fingerprint: r.fingerprint ?? '',
    summary: r.summary ?? '',
    occurrences: Number(r.occurrences),
    last_at: Number(r.last_at),
  }));
}

/** Serializes writers of one repository's test health across replicas (PostgreSQL); SQLite has one writer anyway. */
export async function lockRepositoryHealth(db: Queryable, repoId: string): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`health:${repoId}`}, 0))`.execute(db);
  }
}
