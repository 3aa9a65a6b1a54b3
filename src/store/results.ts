import { type Insertable, PostgresAdapter, sql } from 'kysely';
import { chunked, insertMany, type Queryable } from './db.ts';
import type { TestResultsTable } from './schema.ts';

export type NewResult = Insertable<TestResultsTable>;

export async function insertResults(db: Queryable, rows: readonly NewResult[]): Promise<void> {
  await insertMany(db, 'test_results', rows);
}

/** Tests of the repository with a failed attempt on one of these commits (indexed: failures by commit). */
export async function testsFailedOnCommits(
  db: Queryable,
  repoId: string,
  commitShas: readonly string[],
): Promise<Set<string>> {
  if (commitShas.length === 0) return new Set();
  const rows = await db
    .selectFrom('test_results')
    .select('test_case_id')
    .distinct()
    .where('repo_id', '=', repoId)
    .where('commit_sha', 'in', [...commitShas])
    .where('outcome', '=', 'failed')
    .execute();
  return new Set(rows.map((r) => r.test_case_id));
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
 * pass-on-retry, however old: found through the uploads of those commits) and every attempt since
 * `since` (for the windowed monitors).
 */
export async function loadAttempts(
  db: Queryable,
  repoId: string,
  testIds: readonly string[],
  scope: {
    commitShas: readonly string[];
    since: number | undefined;
    /** Uploads to read as well (the one being ingested, not stored in `uploads` yet). */
    uploadIds?: readonly string[];
  },
): Promise<AttemptRow[]> {
  if (testIds.length === 0) return [];
  const byId = new Map<number, AttemptRow>();
  const columns = [
    'id',
    'test_case_id',
    'at',
    'branch',
    'commit_sha',
    'pr_number',
    'outcome',
    'upload_id',
    'retry_index',
  ] as const;
  const keep = (rows: readonly (AttemptRow & { id: number })[]) => {
    for (const { id, ...row } of rows) byId.set(Number(id), row);
  };
  if (scope.commitShas.length > 0) {
    const uploads = await db
      .selectFrom('uploads')
      .select('id')
      .where('repo_id', '=', repoId)
      .where('commit_sha', 'in', [...scope.commitShas])
      .execute();
    const ids = [...new Set([...uploads.map((u) => u.id), ...(scope.uploadIds ?? [])])];
    for (const ups of chunked(ids, 100)) {
      for (const part of chunked(testIds, 400)) {
        keep(
          await db
            .selectFrom('test_results')
            .select(columns)
            .where('upload_id', 'in', ups)
            .where('test_case_id', 'in', part)
            .execute(),
        );
      }
    }
  }
  if (scope.since !== undefined) {
    for (const part of chunked(testIds, 400)) {
      keep(
        await db
          .selectFrom('test_results')
          .select(columns)
          .where('test_case_id', 'in', part)
          .where('at', '>=', scope.since)
          .execute(),
      );
    }
  }
  return [...byId.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row);
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
