import { randomUUID } from 'node:crypto';
import { type Insertable, PostgresAdapter, sql } from 'kysely';
import { chunked, insertMany, keyChunks, type Queryable } from '../../db/bulk.ts';
import type { TestResultsTable } from '../schema.ts';
import { type FoldDue, markUploadPending } from './duration-writes.ts';
import { storeFailureTexts } from './failure-texts.ts';
import type { PassList } from './pass-codec.ts';
import {
  insertUploadPasses,
  type OrdinalOf,
  type PassBlobs,
  passesOf,
  passUploadsOfCommits,
  passUploadsSince,
} from './passes.ts';
import { addUploadRollups } from './rollups-write.ts';

/** A failed or skipped attempt. */
export type NewResult = Insertable<TestResultsTable>;

/**
 * Stores an upload's attempts: failed and skipped ones in `test_results` with their failure texts in
 * `failure_texts` (by hash, the ones not stored yet), passes as one row of `upload_passes` (their
 * tests' ordinals and times, store/uploads/passes.ts); adds its failures and days to the rollups
 * (store/uploads/rollups.ts) and lists it for the fold that adds its counts to the hour rows and its
 * durations to the means (store/uploads/duration-writes.ts). Answers what the listed uploads call for
 * ('none', 'runs' or 'all'): the caller has it folded once its transaction committed (MeansFolds.later).
 */
export async function insertAttempts(
  db: Queryable,
  upload: { id: string; repoId: string; createdAt: number },
  attempts: {
    results: readonly NewResult[];
    texts: ReadonlyMap<string, string>;
    passes: PassList;
    /** The ordinals of the tests with a result (for the rollups; passes carry theirs). */
    resultOrdinals: ReadonlyMap<string, number>;
  },
): Promise<FoldDue> {
  await storeFailureTexts(db, attempts.texts, upload.createdAt);
  await insertMany(db, 'test_results', attempts.results);
  const passes = attempts.passes.encode();
  await insertUploadPasses(db, { blobId: randomUUID(), uploadId: upload.id, repoId: upload.repoId, passes });
  const ordinals = attempts.resultOrdinals;
  const due = await markUploadPending(db, upload.repoId, upload.id);
  await addUploadRollups(db, upload.repoId, {
    results: attempts.results,
    passes,
    ordinalOf: (id) => {
      const ordinal = ordinals.get(id);
      if (ordinal === undefined) throw new Error(`test ${id} of the upload has no ordinal`);
      return ordinal;
    },
  });
  return due;
}

/**
 * Tests of the repository with a failed attempt on one of these commits, in uploads other than
 * `exceptUpload` (the commits' uploads by `uploads_commit`, their failures by `test_results_upload`).
 */
export async function testsFailedOnCommits(
  db: Queryable,
  repoId: string,
  commitShas: readonly string[],
  exceptUpload?: string,
): Promise<Set<string>> {
  if (commitShas.length === 0) return new Set();
  const rows = await db
    .selectFrom('test_results')
    .select('test_case_id')
    .distinct()
    .where('upload_id', 'in', (eb) =>
      eb
        .selectFrom('uploads')
        .select('uploads.id')
        .where('uploads.repo_id', '=', repoId)
        .where('uploads.commit_sha', 'in', [...commitShas])
        .$if(exceptUpload !== undefined, (q) => q.where('uploads.id', '!=', exceptUpload as string)),
    )
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
 * `since` (for the windowed monitors). Passes take branch, commit and PR from their upload, so the
 * upload being ingested must already be stored. `tests`: the repository's tests, with their
 * ordinals (where their passes are found). Oldest first.
 */
export async function loadAttempts(
  db: Queryable,
  blobs: PassBlobs,
  repoId: string,
  tests: readonly OrdinalOf[],
  scope: {
    commitShas: readonly string[];
    since: number | undefined;
  },
): Promise<AttemptRow[]> {
  if (tests.length === 0) return [];
  const testIds = tests.map((t) => t.id);
  const found: AttemptRow[] = [];
  const columns = [
    'test_case_id',
    'at',
    'branch',
    'commit_sha',
    'pr_number',
    'outcome',
    'upload_id',
    'retry_index',
  ] as const;
  const keepResults = (rows: readonly AttemptRow[]) => {
    for (const row of rows) found.push({ ...row, at: Number(row.at) });
  };
  // The two reads are disjoint: the window's read takes every result since `since`, so the commits'
  // read takes only theirs from before it.
  const since = scope.since;
  if (scope.commitShas.length > 0) {
    const uploads = await db
      .selectFrom('uploads')
      .select('id')
      .where('repo_id', '=', repoId)
      .where('commit_sha', 'in', [...scope.commitShas])
      .execute();
    for (const ups of chunked(
      uploads.map((u) => u.id),
      100,
    )) {
      for (const part of keyChunks(db, testIds, 400)) {
        keepResults(
          await db
            .selectFrom('test_results')
            .select(columns)
            .where('upload_id', 'in', ups)
            .where('test_case_id', 'in', part)
            .$if(since !== undefined, (q) => q.where('at', '<', since as number))
            .execute(),
        );
      }
    }
  }
  if (since !== undefined) {
    for (const part of keyChunks(db, testIds, 400)) {
      keepResults(
        await db
          .selectFrom('test_results')
          .select(columns)
          .where('test_case_id', 'in', part)
          .where('at', '>=', since)
          .execute(),
      );
    }
  }
  // Passes: in the uploads of those commits (all of them) and in uploads with passes since `since`
  // (each upload once, so each pass once).
  const shas = new Set(scope.commitShas);
  const uploads = new Map(
    (await passUploadsOfCommits(db, repoId, scope.commitShas)).map((u) => [u.uploadId, u] as const),
  );
  if (since !== undefined)
    for (const u of await passUploadsSince(db, repoId, since)) uploads.set(u.uploadId, u);
  const passes = await passesOf(
    db,
    blobs,
    tests,
    [...uploads.values()],
    (at, upload) => shas.has(upload.commitSha) || (since !== undefined && at >= since),
  );
  for (const p of passes) {
    found.push({
      test_case_id: p.testId,
      at: p.at,
      branch: p.upload.branch,
      commit_sha: p.upload.commitSha,
      pr_number: p.upload.prNumber,
      outcome: 'passed',
      upload_id: p.upload.uploadId,
      retry_index: p.retryIndex,
    });
  }
  return found.sort((a, b) => a.at - b.at || a.retry_index - b.retry_index);
}

/** Distinct PRs with a failing attempt since `since`, per test. */
export async function prsImpacted(
  db: Queryable,
  testIds: readonly string[],
  since: number,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const part of keyChunks(db, testIds, 400)) {
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

/**
 * The repositories whose health lock an open transaction holds (PostgreSQL): the lock is held to its
 * end, so taking it again (an upload's transaction reaches several store writers that each take it)
 * would be a round trip for nothing. Keyed by the transaction object, which lives as long as it.
 */
const healthLocked = new WeakMap<Queryable, Set<string>>();

/** Serializes writers of one repository's test health across replicas (PostgreSQL); SQLite has one writer anyway. */
export async function lockRepositoryHealth(db: Queryable, repoId: string): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const held = db.isTransaction ? healthLocked.get(db) : undefined;
    if (held?.has(repoId)) return;
    await sql`select pg_advisory_xact_lock(hashtextextended(${`health:${repoId}`}, 0))`.execute(db);
    if (db.isTransaction) {
      if (held === undefined) healthLocked.set(db, new Set([repoId]));
      else held.add(repoId);
    }
  }
}
