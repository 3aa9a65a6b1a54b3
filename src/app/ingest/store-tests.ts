// Storing an upload's tests and its attempts' rows, inside the ingest transaction (ingest.ts), from
// its files' preparations (prepare/): tests that were not known are looked up or inserted, known ones
// that the upload rewrote (seen again, new owners) are written, and each attempt becomes a result row
// or a pass entry.

import type { Queryable } from '../../db/bulk.ts';
import { NEW_TEST_REASON } from '../../domain/health/index.ts';
import { repoFullName, uuidV5 } from '../../domain/testid/index.ts';
import {
  markSeen,
  type NewTestCase,
  type SeenTestCase,
  setOwners,
  upsertTestCases,
} from '../../store/tests/cases.ts';
import { PassList } from '../../store/uploads/pass-codec.ts';
import type { NewResult } from '../../store/uploads/results.ts';
import type { Repository } from '../repositories.ts';
import { failureText } from './prepare/derive.ts';
import type { IdentifiedAttempt, UploadMeta } from './prepare/types.ts';
import { duration, type FilePrep, isWatched, type UploadPrep } from './prepare/upload-prep.ts';

export interface RowContext {
  repoId: string;
  uploadId: string;
  meta: UploadMeta;
}

/** An attempt that did not pass, as a row; `quarantined`: its test was quarantined when stored. */
function resultRow(x: IdentifiedAttempt, quarantined: boolean, ctx: RowContext): NewResult {
  return {
    repo_id: ctx.repoId,
    test_case_id: x.testId,
    upload_id: ctx.uploadId,
    at: x.at,
    branch: ctx.meta.branch,
    commit_sha: ctx.meta.commit_sha,
    pr_number: ctx.meta.pr_number ?? null,
    outcome: x.attempt.outcome,
    retry_index: x.attempt.retryIndex,
    duration_ms: duration(x.attempt),
    failure_fingerprint: x.failure?.fingerprint ?? null,
    failure_summary: x.failure?.summary ?? null,
    failure_text_hash: x.failure?.textHash ?? null,
    quarantined: quarantined ? 1 : 0,
  };
}

function newTestCase(x: IdentifiedAttempt, repoId: string, prep: UploadPrep): NewTestCase {
  const a = x.attempt;
  const { now, rules, identity } = prep.basis;
  return {
    id: x.testId,
    repo_id: repoId,
    name: a.name,
    parent: a.parent,
    classname: a.classname,
    file: a.file,
    variant: identity.variant,
    codeowners: rules === undefined ? '[]' : prep.ownersOf(a.file),
    status: 'HEALTHY',
    status_reason: NEW_TEST_REASON,
    status_at: x.at,
    monitors: '{}',
    has_active_monitor: 0,
    manual_flag: null,
    quarantine_override: 'AUTO',
    quarantined: 0,
    quarantine_setting: null,
    quarantined_at: null,
    ticket_id: null,
    ticket_url: null,
    first_seen_at: now,
    last_seen_at: now,
    prs_impacted_7d: 0,
    rollup_at: now,
    // Handed out when it is stored (upsertTestCases).
    ordinal: -1,
  };
}

/** What storeTests stored: the attempts as stored, and the tests' rows. */
export interface StoredTests {
  /** Every attempt of the upload's files, in order (with its final test id). */
  readonly attempts: readonly IdentifiedAttempt[];
  /** Each distinct test's row. */
  readonly rows: SeenTestCase[];
  /** Rows that are not rows of the known tests as they were (prepare/seen-cache.ts). */
  readonly rewritten: SeenTestCase[];
  /** Rows of the tests that failed in this upload, and of the watched ones (prepare/upload-prep.ts isWatched). */
  readonly failing: SeenTestCase[];
  readonly watched: SeenTestCase[];
  /** Failed and skipped attempts as rows (by test id), their failures' texts by hash, and passes. */
  readonly results: NewResult[];
  /**
   * The ordinals of the tests with a result (the rollups look up no other: passes carry theirs),
   * not a map of every test of the upload.
   */
  readonly resultOrdinals: Map<string, number>;
  readonly texts: Map<string, string>;
  readonly passes: PassList;
}

/**
 * Stores the upload's tests and builds its attempts' rows, from its files' preparations: tests that
 * were not known are looked up or inserted, known ones that this upload rewrote (seen again, new
 * owners) are written. Test ids are unique across repositories, but a custom v5 id is used as is
 * (Trunk's recipe), so two repositories could send the same one. A test id already owned by another
 * repository is re-derived for this repository (deterministically, so later uploads agree) instead of
 * touching the other's test.
 */
export async function storeTests(
  db: Queryable,
  files: readonly FilePrep[],
  input: { prep: UploadPrep; repo: Repository; orgSlug: string; rows: RowContext },
): Promise<StoredTests> {
  const { prep, repo } = input;
  const { now, known } = prep.basis;
  // Distinct tests: the rows of those known (and which of them this upload rewrote), and the first
  // attempt of each of the others. One file (the usual upload) has them each once already.
  let rows: SeenTestCase[];
  let changed: SeenTestCase[];
  const firstOf = new Map<string, IdentifiedAttempt>();
  let watched: SeenTestCase[];
  if (files.length === 1) {
    const f = files[0] as FilePrep;
    rows = [...f.known];
    changed = f.changed;
    watched = [...f.watched];
    for (const i of f.unknown.values()) {
      const x = f.attempts[i] as IdentifiedAttempt;
      firstOf.set(x.testId, x);
    }
  } else {
    // A known test's row is the same object in every file (UploadPrep.knownRow).
    const once = new Set<SeenTestCase>();
    for (const f of files) for (const row of f.known) once.add(row);
    rows = [...once];
    changed = [...new Set(files.flatMap((f) => f.changed))];
    watched = [...new Set(files.flatMap((f) => f.watched))];
    for (const f of files) {
      for (const i of f.unknown.values()) {
        const x = f.attempts[i] as IdentifiedAttempt;
        if (!firstOf.has(x.testId)) firstOf.set(x.testId, x);
      }
    }
  }
  const rewritten = [...changed];
  // Rows this upload rewrote (seen again, new owners), as they were stored and as it leaves them: the
  // known ones', and those of tests looked up below.
  const seen: [was: SeenTestCase, now: SeenTestCase][] = changed.map((row) => [
    known.tests.get(row.id) as SeenTestCase,
    row,
  ]);
  // The others: looked up or inserted.
  const stored = new Map<string, SeenTestCase>();
  const upsert = async (first: ReadonlyMap<string, IdentifiedAttempt>) => {
    const ids = [...first.keys()];
    const attemptOf = (id: string) => first.get(id) as IdentifiedAttempt;
    const { byIndex } = await upsertTestCases(db, {
      repoId: repo.id,
      ids,
      build: (id) => newTestCase(attemptOf(id), repo.id, prep),
    });
    const foreign: string[] = [];
    for (let k = 0; k < ids.length; k++) {
      const found = byIndex[k];
      if (found === undefined) {
        foreign.push(ids[k] as string);
        continue;
      }
      // (A row just inserted is as the upload leaves it already.)
      const row = prep.seenAgain(found, attemptOf(found.id).attempt.file);
      if (row !== found) seen.push([found, row]);
      stored.set(row.id, row);
      rows.push(row);
      rewritten.push(row);
      if (isWatched(row)) watched.push(row);
    }
    return foreign;
  };
  const foreign = firstOf.size === 0 ? [] : await upsert(firstOf);
  let attempts: IdentifiedAttempt[][] = files.map((f) => f.attempts);
  if (foreign.length > 0) {
    const local = new Map(
      foreign.map((id) => [id, uuidV5(`${input.orgSlug}#${repoFullName(repo)}#${id}`)] as const),
    );
    attempts = attempts.map((list) =>
      list.map((x) => {
        const id = local.get(x.testId);
        return id === undefined ? x : { ...x, testId: id };
      }),
    );
    const localIds = new Set(local.values());
    const byLocal = new Map<string, IdentifiedAttempt>();
    for (const list of attempts)
      for (const x of list) if (localIds.has(x.testId) && !byLocal.has(x.testId)) byLocal.set(x.testId, x);
    const left = await upsert(byLocal);
    if (left.length > 0) throw new Error(`tests ${left.join(', ')} of the upload could not be stored`);
  }
  await writeSeen(db, repo.id, now, seen);
  // The attempts' rows: passes of tests known while preparing are there already.
  const results: NewResult[] = [];
  const resultOrdinals = new Map<string, number>();
  const texts = new Map<string, string>();
  const passes = files.length === 1 ? (files[0] as FilePrep).passes : new PassList();
  const failing = new Map<string, SeenTestCase>();
  const storedRow = (x: IdentifiedAttempt): SeenTestCase => {
    const row = stored.get(x.testId);
    if (row === undefined) throw new Error(`test ${x.testId} of the upload was not stored`);
    return row;
  };
  for (let n = 0; n < files.length; n++) {
    const f = files[n] as FilePrep;
    const list = attempts[n] as IdentifiedAttempt[];
    if (passes !== f.passes) passes.append(f.passes);
    for (const i of f.unresolved) {
      const x = list[i] as IdentifiedAttempt;
      if (x.attempt.outcome !== 'passed') continue;
      passes.push(storedRow(x).ordinal, x.at, x.attempt.retryIndex, duration(x.attempt));
    }
    for (const i of f.notPassed) {
      const x = list[i] as IdentifiedAttempt;
      const row = f.rowOf[i] ?? storedRow(x);
      results.push(resultRow(x, row.quarantined === 1, input.rows));
      resultOrdinals.set(x.testId, row.ordinal);
      if (x.attempt.outcome === 'failed') failing.set(row.id, row);
      if (x.failure !== null && !texts.has(x.failure.textHash))
        texts.set(x.failure.textHash, failureText(x.attempt));
    }
  }
  // By test too (a stable sort: a test's own attempts keep their order): every index of
  // test_results leads with the test after the upload's constants, so they all grow in one sweep.
  results.sort((a, b) => (a.test_case_id < b.test_case_id ? -1 : a.test_case_id > b.test_case_id ? 1 : 0));
  return {
    attempts: attempts.length === 1 ? (attempts[0] as IdentifiedAttempt[]) : attempts.flat(),
    rows,
    rewritten,
    failing: [...failing.values()],
    watched,
    results,
    resultOrdinals,
    texts,
    passes,
  };
}

/** Writes what seeing its tests again changed in their rows: last seen (now), owners. */
async function writeSeen(
  db: Queryable,
  repoId: string,
  now: number,
  seen: readonly [was: SeenTestCase, now: SeenTestCase][],
): Promise<void> {
  const stale: string[] = [];
  const owners = new Map<string, string[]>();
  for (const [was, row] of seen) {
    if (row.last_seen_at !== was.last_seen_at) stale.push(row.id);
    if (row.codeowners !== was.codeowners) {
      const ids = owners.get(row.codeowners);
      if (ids === undefined) owners.set(row.codeowners, [row.id]);
      else ids.push(row.id);
    }
  }
  await markSeen(db, repoId, now, stale);
  await setOwners(db, repoId, owners);
}
