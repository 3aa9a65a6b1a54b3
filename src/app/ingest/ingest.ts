import { randomUUID } from 'node:crypto';
import { parseCodeowners } from '../../domain/codeowners/index.ts';
import { NEW_TEST_REASON, passesCanActivate } from '../../domain/health/index.ts';
import { repoFullName, uuidV5 } from '../../domain/testid/index.ts';
import type { Queryable } from '../../store/db.ts';
import { linkRunUpload } from '../../store/flake.ts';
import { PassList } from '../../store/pass-codec.ts';
import { bumpHealthVersion, findRepo, healthVersion } from '../../store/repos.ts';
import {
  insertAttempts,
  lockRepositoryHealth,
  type NewResult,
  testsFailedOnCommits,
} from '../../store/results.ts';
import {
  findTestCases,
  markSeen,
  type NewTestCase,
  type SeenTestCase,
  setOwners,
  type TestCaseRow,
  upsertTestCases,
} from '../../store/test-cases.ts';
import { findUploadByKey, insertUpload, setUploadResult } from '../../store/uploads.ts';
import type { AppContext, Caller } from '../context.ts';
import { assertForgeGranted } from '../forge-grants.ts';
import { recomputeTests } from '../health/recompute.ts';
import { type HealthSettings, loadHealthSettings } from '../health/settings.ts';
import { runsForUpload } from '../queue/run-links.ts';
import { checkOrgSlug, ensureRepository, type RepoRef, type Repository, repoKey } from '../repositories.ts';
import { failureText } from './derive.ts';
import type { ParsedFile } from './parse-file.ts';
import { duration, type FilePrep, type IdentifiedAttempt, isWatched, UploadPrep } from './prepare.ts';
import { buildResult, type UploadResult } from './result.ts';
import { type KnownTests, seenTestsCache, withSeen } from './seen-cache.ts';

export type { IdentifiedAttempt } from './prepare.ts';

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

/**
 * The identity an upload's tests will most likely get, and what the upload most likely knows of
 * them, for its files to be prepared while they are parsed (prepare.ts): the repository as stored
 * (ids use its stored spelling), else as the upload names it, and the seen cache at its health
 * version. ingestUpload checks the preparation against the repository it locks, and prepares again
 * what no longer holds.
 */
export async function prepareUpload(ctx: AppContext, caller: Caller, meta: UploadMeta): Promise<UploadPrep> {
  await assertForgeGranted(ctx, caller, meta.repo);
  const stored = await findRepo(ctx.db, caller.orgId, repoKey(meta.repo));
  const version = stored === undefined ? -1 : Number(stored.health_version);
  return new UploadPrep({
    identity: {
      orgSlug: caller.orgSlug,
      repoFullName: repoFullName(stored ?? meta.repo),
      variant: meta.variant ?? '',
    },
    now: ctx.now(),
    rules: meta.codeowners === undefined ? undefined : parseCodeowners(meta.codeowners).rules,
    repoId: stored?.id,
    version,
    known: stored === undefined ? NOTHING_KNOWN : seenTestsCache(ctx.db).lookup(stored.id, version),
  });
}

const NOTHING_KNOWN: KnownTests = { tests: new Map(), full: new Map() };

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
  };
}

/** What storeTests stored: the attempts as stored, and the tests' rows. */
interface StoredTests {
  /** Every attempt of the upload's files, in order (with its final test id). */
  readonly attempts: readonly IdentifiedAttempt[];
  /** Each distinct test's row. */
  readonly rows: SeenTestCase[];
  /** Rows that are not rows of the known tests as they were (seen-cache.ts). */
  readonly rewritten: SeenTestCase[];
  /** Rows of the tests that failed in this upload, and of the watched ones (prepare.ts isWatched). */
  readonly failing: SeenTestCase[];
  readonly watched: SeenTestCase[];
  /** Failed and skipped attempts as rows (by test id), their failures' texts by hash, and passes. */
  readonly results: NewResult[];
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
async function storeTests(
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
  await writeSeen(db, now, seen);
  // The attempts' rows: passes of tests known while preparing are there already.
  const results: NewResult[] = [];
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
    texts,
    passes,
  };
}

/** Writes what seeing its tests again changed in their rows: last seen (now), owners. */
async function writeSeen(
  db: Queryable,
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
  await markSeen(db, now, stale);
  await setOwners(db, owners);
}

/**
 * The tests of an upload whose health can change: those that failed in it or failed on its commit
 * before (pass-on-retry across jobs), and the watched ones (an active monitor, a flag, unhealthy). A
 * healthy test that only passed keeps its status (passes never activate a monitor, unless a
 * 0-threshold one exists), so the usual upload, mostly passes, re-evaluates a few tests instead of
 * all of them.
 */
async function testsToEvaluate(
  db: Queryable,
  repoId: string,
  stored: StoredTests,
  options: {
    commitSha: string;
    /** The upload being ingested (its failures are `stored.failing`). */
    uploadId: string;
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
  if (passesCanActivate(options.settings.policy)) return full(stored.rows);
  const chosen = new Map<string, SeenTestCase>();
  for (const r of stored.failing) chosen.set(r.id, r);
  for (const r of stored.watched) chosen.set(r.id, r);
  const before = await testsFailedOnCommits(db, repoId, [options.commitSha], options.uploadId);
  for (const id of chosen.keys()) before.delete(id);
  if (before.size > 0) for (const r of stored.rows) if (before.has(r.id)) chosen.set(r.id, r);
  return full([...chosen.values()]);
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
 * `prep`: the files' preparation made while they were parsed (prepareUpload), used if it still holds.
 * `notes`: what the upload as a whole skipped or lacked (a bundle's), stored and answered as warnings.
 */
export async function ingestUpload(
  ctx: AppContext,
  caller: Caller,
  meta: UploadMeta,
  files: readonly ParsedFile[],
  source: 'multipart' | 'bundle',
  prep?: UploadPrep,
  notes: readonly string[] = [],
): Promise<UploadResult> {
  checkOrgSlug(caller, meta.org_url_slug);
  await assertForgeGranted(ctx, caller, meta.repo);
  const earlier = await previousUpload(ctx.db, caller, meta);
  if (earlier !== undefined) return earlier;
  const now = prep?.basis.now ?? ctx.now();
  const variant = meta.variant ?? '';
  const rules =
    prep?.basis.rules ?? (meta.codeowners === undefined ? undefined : parseCodeowners(meta.codeowners).rules);
  const cache = seenTestsCache(ctx.db);
  let afterCommit = () => {};
  const answer = await ctx.db.transaction().execute(async (trx) => {
    const { repository } = await ensureRepository(trx, caller, meta.repo, now);
    await lockRepositoryHealth(trx, repository.id);
    const again = await previousUpload(trx, caller, meta);
    if (again !== undefined) return again;
    const startVersion = await healthVersion(trx, repository.id);
    const identity = { orgSlug: caller.orgSlug, repoFullName: repoFullName(repository), variant };
    // What was prepared while parsing, if it still holds; else the files are prepared now.
    const usable = prep?.usableFor(repository.id, startVersion, identity) === true ? prep : undefined;
    const using =
      usable ??
      new UploadPrep({
        identity,
        now,
        rules,
        repoId: repository.id,
        version: startVersion,
        known: cache.lookup(repository.id, startVersion),
      });
    // The tests known now: the preparation's if it was made at this version (a preparation that
    // resolved nothing may be older), else the cache's. Remembered after the commit with this
    // upload's rows: a stale base would outlive the change that made it stale.
    const current = using.basis.repoId === repository.id && using.basis.version === startVersion;
    const known = current ? using.basis.known : cache.lookup(repository.id, startVersion);
    const prepared = files.map((f) => usable?.preparedOf(f) ?? using.prepareWhole(f));
    const uploadId = randomUUID();
    const links = await runsForUpload(trx, repository.id, meta.commit_sha, meta.branch);
    const stored = links[0] === undefined ? meta : { ...meta, branch: links[0].testBranch };
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
    const toStore = await storeTests(trx, prepared, {
      prep: using,
      repo: repository,
      orgSlug: caller.orgSlug,
      rows: { repoId: repository.id, uploadId, meta: stored },
    });
    const { attempts, rows, rewritten } = toStore;
    await insertAttempts(trx, { id: uploadId, repoId: repository.id, createdAt: now }, toStore);
    const settings = await loadHealthSettings(trx, repository.id);
    const evaluate = await testsToEvaluate(trx, repository.id, toStore, {
      commitSha: meta.commit_sha,
      uploadId,
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
      notes,
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
