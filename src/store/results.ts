import { randomUUID } from 'node:crypto';
import { type Insertable, PostgresAdapter, sql } from 'kysely';
import { chunked, insertMany, keyChunks, type Queryable } from './db.ts';
import { storeFailureTexts } from './failure-texts.ts';
import type { PassList } from './pass-codec.ts';
import {
  insertUploadPasses,
  type OrdinalOf,
  ordinalsOf,
  passCounts,
  passesOf,
  passUploadsOfCommits,
  passUploadsSince,
} from './passes.ts';
import type { TestResultsTable } from './schema.ts';

/** A failed or skipped attempt. */
export type NewResult = Insertable<TestResultsTable>;

/**
 * Stores an upload's attempts: failed and skipped ones in `test_results` with their failure texts in
 * `failure_texts` (by hash, the ones not stored yet), passes as one row of `upload_passes` (their
 * tests' ordinals and times, store/passes.ts).
 */
export async function insertAttempts(
  db: Queryable,
  upload: { id: string; repoId: string; createdAt: number },
  attempts: {
    results: readonly NewResult[];
    texts: ReadonlyMap<string, string>;
    passes: PassList;
  },
): Promise<void> {
  await storeFailureTexts(db, attempts.texts, upload.createdAt);
  await insertMany(db, 'test_results', attempts.results);
  await insertUploadPasses(db, {
    blobId: randomUUID(),
    uploadId: upload.id,
    repoId: upload.repoId,
    passes: attempts.passes.encode(),
  });
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

/** Attempts that ran (passed or failed) and failed, per test, since each of two times. */
export interface RunCounts {
  ran: number;
  failed: number;
}

/**
 * For each test: its attempts that ran and failed since `since` and since `recent` (≥ since), read
 * for all the tests at once: failures by one grouped query (by test_results' (test_case_id, at) key),
 * passes from the uploads since `since` (store/passes.ts). Tests without attempts are absent.
 */
export async function attemptCountsOf(
  db: Queryable,
  testIds: readonly string[],
  since: number,
  recent: number,
): Promise<Map<string, { since: RunCounts; recent: RunCounts }>> {
  const out = new Map<string, { since: RunCounts; recent: RunCounts }>();
  const entry = (id: string) => {
    let e = out.get(id);
    if (e === undefined) {
      e = { since: { ran: 0, failed: 0 }, recent: { ran: 0, failed: 0 } };
      out.set(id, e);
    }
    return e;
  };
  for (const part of keyChunks(db, testIds, 400)) {
    const { rows } = await sql<{ id: string; n: number; r: number }>`
      select test_case_id as id, count(*) as n, sum(case when at >= ${recent} then 1 else 0 end) as r
      from test_results
      where test_case_id in (${sql.join(part)}) and at >= ${since} and outcome = 'failed'
      group by test_case_id`.execute(db);
    for (const row of rows) {
      const e = entry(row.id);
      const n = Number(row.n);
      const r = Number(row.r ?? 0);
      e.since.ran += n;
      e.recent.ran += r;
      e.since.failed += n;
      e.recent.failed += r;
    }
  }
  // Passes count as run only.
  const byRepo = new Map<string, OrdinalOf[]>();
  for (const t of await ordinalsOf(db, testIds)) {
    const list = byRepo.get(t.repoId);
    if (list === undefined) byRepo.set(t.repoId, [t]);
    else list.push(t);
  }
  for (const [repoId, tests] of byRepo) {
    for (const [id, [n = 0, r = 0]] of await passCounts(db, repoId, tests, [since, recent])) {
      const e = entry(id);
      e.since.ran += n;
      e.recent.ran += r;
    }
  }
  return out;
}

export interface FailureGroupRow {
  fingerprint: string;
  summary: string;
  occurrences: number;
  last_at: number;
}

/**
 * Each test's failures since `since`, grouped by fingerprint, most frequent first (then the most
 * recent, then by fingerprint), at most `limit` groups per test; read for all the tests at once.
 */
export async function failureGroupsOf(
  db: Queryable,
  testIds: readonly string[],
  since: number,
  limit: number,
): Promise<Map<string, FailureGroupRow[]>> {
  const out = new Map<string, FailureGroupRow[]>();
  for (const part of keyChunks(db, testIds, 400)) {
    const { rows } = await sql<{
      id: string;
      fingerprint: string | null;
      summary: string | null;
      occurrences: number;
      last_at: number;
    }>`
      select test_case_id as id, failure_fingerprint as fingerprint, min(failure_summary) as summary,
        count(*) as occurrences, max(at) as last_at
      from test_results
      where test_case_id in (${sql.join(part)}) and outcome = 'failed' and at >= ${since}
      group by test_case_id, failure_fingerprint`.execute(db);
    for (const r of rows) {
      const group = {
        fingerprint: r.fingerprint ?? '',
        summary: r.summary ?? '',
        occurrences: Number(r.occurrences),
        last_at: Number(r.last_at),
      };
      const groups = out.get(r.id);
      if (groups === undefined) out.set(r.id, [group]);
      else groups.push(group);
    }
  }
  for (const [id, groups] of out) {
    groups.sort(
      (a, b) =>
        b.occurrences - a.occurrences ||
        b.last_at - a.last_at ||
        (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0),
    );
    out.set(id, groups.slice(0, limit));
  }
  return out;
}

/** Serializes writers of one repository's test health across replicas (PostgreSQL); SQLite has one writer anyway. */
export async function lockRepositoryHealth(db: Queryable, repoId: string): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`health:${repoId}`}, 0))`.execute(db);
  }
}
