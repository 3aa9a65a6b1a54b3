import { randomUUID } from 'node:crypto';
import { type CodeownersRule, ownersFor, parseCodeowners } from '../../domain/codeowners/index.ts';
import { NEW_TEST_REASON, passesCanActivate } from '../../domain/health/index.ts';
import type { JunitAttempt } from '../../domain/junit/index.ts';
import { repoFullName, uuidV5 } from '../../domain/testid/index.ts';
import type { Queryable } from '../../store/db.ts';
import { linkRunUpload } from '../../store/flake.ts';
import type { PassEntry } from '../../store/pass-codec.ts';
import { bumpHealthVersion, findRepo, healthVersion } from '../../store/repos.ts';
import {
  insertAttempts,
  lockRepositoryHealth,
  type NewResult,
  testsFailedOnCommits,
} from '../../store/results.ts';
import {
  findTestCases,
  type NewTestCase,
  type SeenTestCase,
  type TestCaseRow,
  upsertTestCases,
} from '../../store/test-cases.ts';
import { findUploadByKey, insertUpload, setUploadResult } from '../../store/uploads.ts';
import type { AppContext, Caller } from '../context.ts';
import { recomputeTests } from '../health/recompute.ts';
import { type HealthSettings, loadHealthSettings } from '../health/settings.ts';
import { runsForUpload } from '../queue/run-links.ts';
import { checkOrgSlug, ensureRepository, type RepoRef, type Repository, repoKey } from '../repositories.ts';
import {
  attemptTestId,
  type FailureFacts,
  failureFacts,
  failureText,
  type IdentityContext,
  sameIdentity,
} from './derive.ts';
import type { ParsedFile } from './parse-file.ts';
import { buildResult, type UploadResult } from './result.ts';
import { seenTestsCache, withSeen } from './seen-cache.ts';

/** The `meta` of an upload (docs/upload-contract.md), already validated against its schema. */
export interface UploadMeta {
  repo: RepoRef;
  org_url_slug: string;
  branch: string;
  commit_sha: string;
  pr_number?: number | undefined;
  pr_title?: string | undefined;
  job_name?: string | undefined;
  job_url?: string | undefined;
  variant?: string | undefined;
  run_attempt?: number | undefined;
  codeowners?: string | undefined;
  upload_key?: string | undefined;
}

/** Attempt timestamps more than 30 days old or over an hour ahead are runner defaults: use the upload time. */
const OLDEST_PLAUSIBLE_MS = 30 * 24 * 3_600_000;
const FUTURE_SLACK_MS = 3_600_000;

/** One attempt with its test identity resolved. */
export interface IdentifiedAttempt {
  readonly testId: string;
  readonly attempt: JunitAttempt;
  readonly at: number;
  /** Its failure's fingerprint and summary (null unless it failed). */
  readonly failure: FailureFacts | null;
}

function attemptTime(attempt: JunitAttempt, now: number): number {
  const t = attempt.timestamp;
  return t !== null && t >= now - OLDEST_PLAUSIBLE_MS && t <= now + FUTURE_SLACK_MS ? t : now;
}

/** Each attempt with its test id and failure facts: those derived while parsing, if they still hold. */
export function identify(
  files: readonly ParsedFile[],
  identity: IdentityContext,
  now: number,
): IdentifiedAttempt[] {
  const attempts: IdentifiedAttempt[] = [];
  for (const f of files) {
    const ids = f.ids !== undefined && sameIdentity(f.ids.identity, identity) ? f.ids : undefined;
    for (let k = 0; k < f.attempts.length; k++) {
      const attempt = f.attempts[k] as JunitAttempt;
      const testId = ids?.testIds[k] ?? attemptTestId(identity, attempt);
      attempts.push({
        testId,
        attempt,
        at: attemptTime(attempt, now),
        failure: f.failures === undefined ? failureFacts(attempt, testId) : (f.failures[k] ?? null),
      });
    }
  }
  return attempts;
}

/**
 * The identity an upload's tests will most likely get, for the parser threads to compute their ids
 * while parsing: the repository as stored (ids use its stored spelling), else as the upload names it.
 * ingestUpload checks it against the repository it stores into, and recomputes ids that differ.
 */
export async function likelyIdentity(
  ctx: AppContext,
  caller: Caller,
  meta: UploadMeta,
): Promise<IdentityContext> {
  const stored = await findRepo(ctx.db, caller.orgId, repoKey(meta.repo));
  return {
    orgSlug: caller.orgSlug,
    repoFullName: repoFullName(stored ?? meta.repo),
    variant: meta.variant ?? '',
  };
}

interface RowContext {
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

function duration(a: JunitAttempt): number | null {
  return a.durationMs === null ? null : Math.round(a.durationMs);
}

/**
 * The upload's attempts as stored: failed and skipped ones as rows, in test id order, with the
 * failures' texts by hash, and passes by their tests' ordinals. `rowOf[i]`: the stored row of
 * attempt i's test (its ordinal and quarantine, without a lookup by id per attempt).
 */
function attemptRows(
  attempts: readonly IdentifiedAttempt[],
  rowOf: readonly (SeenTestCase | undefined)[],
  ctx: RowContext,
): { results: NewResult[]; texts: Map<string, string>; passes: PassEntry[] } {
  const results: NewResult[] = [];
  const texts = new Map<string, string>();
  const passes: PassEntry[] = [];
  for (let i = 0; i < attempts.length; i++) {
    const x = attempts[i] as IdentifiedAttempt;
    const row = rowOf[i];
    if (row === undefined) throw new Error(`test ${x.testId} of the upload was not stored`);
    if (x.attempt.outcome !== 'passed') {
      results.push(resultRow(x, row.quarantined === 1, ctx));
      if (x.failure !== null && !texts.has(x.failure.textHash))
        texts.set(x.failure.textHash, failureText(x.attempt));
      continue;
    }
    const ordinal = row.ordinal;
    passes.push({ ordinal, at: x.at, retryIndex: x.attempt.retryIndex, durationMs: duration(x.attempt) });
  }
  // By test too (a stable sort: a test's own attempts keep their order): every index of
  // test_results leads with the test after the upload's constants, so they all grow in one sweep.
  results.sort((a, b) => (a.test_case_id < b.test_case_id ? -1 : a.test_case_id > b.test_case_id ? 1 : 0));
  return { results, texts, passes };
}

function newTestCase(
  x: IdentifiedAttempt,
  repoId: string,
  variant: string,
  now: number,
  owners = '[]',
): NewTestCase {
  const a = x.attempt;
  return {
    id: x.testId,
    repo_id: repoId,
    name: a.name,
    parent: a.parent,
    classname: a.classname,
    file: a.file,
    variant,
    codeowners: owners,
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
  };
}

function ownersByTest(
  attempts: readonly IdentifiedAttempt[],
  rules: readonly CodeownersRule[],
): Map<string, string> {
  const owners = new Map<string, string>();
  const byFile = new Map<string, string>();
  for (const x of attempts) {
    if (owners.has(x.testId)) continue;
    const file = x.attempt.file ?? '';
    let json = byFile.get(file);
    if (json === undefined) {
      json = JSON.stringify(file === '' ? [] : ownersFor(rules, file));
      byFile.set(file, json);
    }
    owners.set(x.testId, json);
  }
  return owners;
}

/** What storeTestCases stored: the attempts with their final test ids, and the tests' rows. */
interface StoredTests {
  readonly attempts: IdentifiedAttempt[];
  /** Each distinct test's row. */
  readonly rows: SeenTestCase[];
  /** Rows that are not rows of the known tests as they were (seen-cache.ts). */
  readonly rewritten: SeenTestCase[];
  /** The row of each attempt's test, in the order of `attempts`. */
  readonly rowOf: (SeenTestCase | undefined)[];
}

/**
 * Stores the upload's tests (new ones inserted, known ones marked seen) and returns their rows with
 * the attempts' final ids. Test ids are unique across repositories, but a custom v5 id is used as is
 * (Trunk's recipe), so two repositories could send the same one. A test id already owned by another
 * repository is re-derived for this repository (deterministically, so later uploads agree) instead of
 * touching the other's test.
 */
async function storeTestCases(
  db: Queryable,
  identified: IdentifiedAttempt[],
  input: {
    orgSlug: string;
    repo: Repository;
    variant: string;
    now: number;
    rules: CodeownersRule[] | undefined;
    known: ReadonlyMap<string, SeenTestCase>;
  },
): Promise<StoredTests> {
  const store = async (attempts: readonly IdentifiedAttempt[]) => {
    // Distinct tests in order of first appearance, and each attempt's place among them.
    const at = new Map<string, number>();
    const ids: string[] = [];
    const firsts: IdentifiedAttempt[] = [];
    const place = new Int32Array(attempts.length);
    for (let i = 0; i < attempts.length; i++) {
      const x = attempts[i] as IdentifiedAttempt;
      let k = at.get(x.testId);
      if (k === undefined) {
        k = ids.length;
        at.set(x.testId, k);
        ids.push(x.testId);
        firsts.push(x);
      }
      place[i] = k;
    }
    const owners = input.rules === undefined ? undefined : ownersByTest(attempts, input.rules);
    const upserted = await upsertTestCases(db, {
      repoId: input.repo.id,
      now: input.now,
      ids,
      build: (id) =>
        newTestCase(
          firsts[at.get(id) as number] as IdentifiedAttempt,
          input.repo.id,
          input.variant,
          input.now,
          owners?.get(id),
        ),
      owners,
      known: input.known,
    });
    const rowOf = Array.from(place, (k) => upserted.byIndex[k]);
    return { ...upserted, ids, rowOf };
  };
  const first = await store(identified);
  if (first.rows.length === first.ids.length)
    return { attempts: identified, rows: first.rows, rewritten: first.rewritten, rowOf: first.rowOf };
  const mine = new Set(first.rows.map((r) => r.id));
  const local = (id: string) => uuidV5(`${input.orgSlug}#${repoFullName(input.repo)}#${id}`);
  const attempts = identified.map((x) => (mine.has(x.testId) ? x : { ...x, testId: local(x.testId) }));
  const second = await store(attempts.filter((x) => !mine.has(x.testId)));
  // The second pass stored, in order, the attempts the first could not.
  let next = 0;
  const rowOf = first.rowOf.map((row) => row ?? second.rowOf[next++]);
  return {
    attempts,
    rows: [...first.rows, ...second.rows],
    rewritten: [...first.rewritten, ...second.rewritten],
    rowOf,
  };
}

/**
 * The tests of an upload whose health can change: those that failed in it or failed on its commit
 * before (pass-on-retry across jobs), and those with an active monitor or a flag. A healthy test that
 * only passed keeps its status (passes never activate a monitor, unless a 0-threshold one exists), so
 * the usual upload, mostly passes, re-evaluates a few tests instead of all of them.
 */
async function testsToEvaluate(
  db: Queryable,
  repoId: string,
  rows: readonly SeenTestCase[],
  attempts: readonly IdentifiedAttempt[],
  options: {
    commitSha: string;
    settings: HealthSettings;
    /** Whole rows known to be current (seen-cache.ts): not looked up again. */
    cached: ReadonlyMap<string, TestCaseRow>;
  },
): Promise<TestCaseRow[]> {
  const full = async (seen: readonly SeenTestCase[]) => {
    const out: TestCaseRow[] = [];
    const missing: string[] = [];
    for (const r of seen) {
      const row = options.cached.get(r.id);
      // The upload may have rewritten its seen columns (seen again, new owners) since.
      if (row === undefined) missing.push(r.id);
      else out.push(withSeen(row, r));
    }
    if (missing.length > 0) for (const row of await findTestCases(db, repoId, missing)) out.push(row);
    return out;
  };
  if (passesCanActivate(options.settings.policy)) return full(rows);
  const failed = await testsFailedOnCommits(db, repoId, [options.commitSha]);
  for (const x of attempts) if (x.attempt.outcome === 'failed') failed.add(x.testId);
  return full(
    rows.filter(
      (r) =>
        failed.has(r.id) || r.has_active_monitor === 1 || r.manual_flag !== null || r.status !== 'HEALTHY',
    ),
  );
}

async function previousUpload(
  db: Queryable,
  caller: Caller,
  meta: UploadMeta,
): Promise<UploadResult | undefined> {
  if (meta.upload_key === undefined) return undefined;
  const repo = await findRepo(db, caller.orgId, repoKey(meta.repo));
  const row = repo === undefined ? undefined : await findUploadByKey(db, repo.id, meta.upload_key);
  return row === undefined ? undefined : { ...(JSON.parse(row.result) as UploadResult), duplicate: true };
}

/**
 * Stores an upload's parsed files and updates the health of every test it touched, in one
 * transaction: a crash leaves either the whole upload or none of it. Creates the repository on
 * its first upload. A repeated upload_key answers the first upload's result and stores nothing.
 */
export async function ingestUpload(
  ctx: AppContext,
  caller: Caller,
  meta: UploadMeta,
  files: readonly ParsedFile[],
  source: 'multipart' | 'bundle',
): Promise<UploadResult> {
  checkOrgSlug(caller, meta.org_url_slug);
  const earlier = await previousUpload(ctx.db, caller, meta);
  if (earlier !== undefined) return earlier;
  const now = ctx.now();
  const variant = meta.variant ?? '';
  const rules = meta.codeowners === undefined ? undefined : parseCodeowners(meta.codeowners).rules;
  const cache = seenTestsCache(ctx.db);
  let afterCommit = () => {};
  const answer = await ctx.db.transaction().execute(async (trx) => {
    const { repository } = await ensureRepository(trx, caller, meta.repo, now);
    await lockRepositoryHealth(trx, repository.id);
    const again = await previousUpload(trx, caller, meta);
    if (again !== undefined) return again;
    const startVersion = await healthVersion(trx, repository.id);
    const known = cache.lookup(repository.id, startVersion);
    const uploadId = randomUUID();
    const links = await runsForUpload(trx, repository.id, meta.commit_sha, meta.branch);
    const stored = links[0] === undefined ? meta : { ...meta, branch: links[0].testBranch };
    const identity = { orgSlug: caller.orgSlug, repoFullName: repoFullName(repository), variant };
    const { attempts, rows, rewritten, rowOf } = await storeTestCases(trx, identify(files, identity, now), {
      orgSlug: caller.orgSlug,
      repo: repository,
      variant,
      now,
      rules,
      known: known.tests,
    });
    // The upload row first: stored passes take their branch, commit and PR from it.
    await insertUpload(trx, {
      id: uploadId,
      repo_id: repository.id,
      upload_key: meta.upload_key ?? null,
      source,
      branch: stored.branch,
      commit_sha: meta.commit_sha,
      pr_number: meta.pr_number ?? null,
      job_name: meta.job_name ?? null,
      job_url: meta.job_url ?? null,
      variant,
      created_at: now,
      result: '{}',
    });
    const toStore = attemptRows(attempts, rowOf, { repoId: repository.id, uploadId, meta: stored });
    await insertAttempts(trx, { id: uploadId, repoId: repository.id }, toStore);
    const settings = await loadHealthSettings(trx, repository.id);
    const evaluate = await testsToEvaluate(trx, repository.id, rows, attempts, {
      commitSha: meta.commit_sha,
      settings,
      cached: known.full,
    });
    const outcome = await recomputeTests(
      trx,
      repository.id,
      evaluate.map((r) => r.id),
      settings,
      { rows: evaluate, now, commitShas: [meta.commit_sha], by: `upload ${uploadId}` },
    );
    // Tests quarantined as stored, of the attempts that did not pass (the result lists failures only).
    const quarantined = new Set(
      toStore.results.filter((r) => r.quarantined === 1).map((r) => r.test_case_id),
    );
    const result = buildResult({
      uploadId,
      repository,
      files,
      attempts,
      tests: rows.length,
      // Re-evaluated tests as decided now, the others as they were.
      isQuarantined: (id) => outcome.quarantined.get(id) ?? quarantined.has(id),
    });
    await bumpHealthVersion(trx, repository.id);
    await setUploadResult(trx, uploadId, JSON.stringify(result));
    for (const link of links) await linkRunUpload(trx, link.queueId, link.runId, uploadId);
    // What this upload saw of its tests stays valid after the commit (the re-evaluated ones as
    // recomputed), unless another transaction bumped the version meanwhile (then its changes are unseen).
    const endVersion = await healthVersion(trx, repository.id);
    const ours = startVersion + 1 + (outcome.bumped ? 1 : 0);
    afterCommit =
      endVersion === ours
        ? () => cache.remember(repository.id, endVersion, known, rewritten, outcome.rows)
        : () => cache.forget(repository.id);
    return result;
  });
  afterCommit();
  return answer;
}
