// Ingesting an upload: its parsed files stored and the health of every test it touched updated, in
// one transaction. Receiving and parsing the files (receive/, parsing/) and preparing them (prepare/)
// happen before; storing the tests and attempts is store-tests.ts.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/bulk.ts';
import { passesCanActivate } from '../../domain/health/index.ts';
import { repoFullName } from '../../domain/testid/index.ts';
import { linkRunUpload } from '../../store/queue/flake.ts';
import { bumpHealthVersion, findRepo, healthVersion } from '../../store/tenancy/repos.ts';
import { findTestCases, type SeenTestCase, type TestCaseRow } from '../../store/tests/cases.ts';
import { inTransaction } from '../../store/transaction.ts';
import { insertAttempts, lockRepositoryHealth, testsFailedOnCommits } from '../../store/uploads/results.ts';
import { findUploadByKey, insertUpload, setUploadResult } from '../../store/uploads/uploads.ts';
import type { AppContext, Caller } from '../context.ts';
import { assertForgeGranted } from '../forge-grants.ts';
import { recomputeTests } from '../health/recompute.ts';
import { type HealthSettings, loadHealthSettings } from '../health/settings.ts';
import { runsForUpload } from '../queue/run-links.ts';
import { checkOrgSlug, ensureRepository, repoKey } from '../repositories.ts';
import { settle, startOf } from './prepare/prepare-upload.ts';
import { withSeen } from './prepare/seen-cache.ts';
import type { ParsedFile, UploadMeta } from './prepare/types.ts';
import type { UploadPrep } from './prepare/upload-prep.ts';
import { buildResult, type UploadResult } from './result.ts';
import { type StoredTests, storeTests } from './store-tests.ts';

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
    /** Whole rows known to be current (prepare/seen-cache.ts): not looked up again. */
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

/** An upload to store: its meta and parsed files, and what was made of them while they were parsed. */
export interface UploadToStore {
  readonly meta: UploadMeta;
  readonly files: readonly ParsedFile[];
  readonly source: 'multipart' | 'bundle';
  /** The files' preparation made while they were parsed (prepareUpload), used if it still holds. */
  readonly prep?: UploadPrep | undefined;
  /** What the upload as a whole skipped or lacked (a bundle's), stored and answered as warnings. */
  readonly notes?: readonly string[];
}

/**
 * Stores an upload's parsed files and updates the health of every test it touched, in one
 * transaction: a crash leaves either the whole upload or none of it. Creates the repository on
 * its first upload. A repeated upload_key answers the first upload's result and stores nothing.
 */
export async function ingestUpload(
  ctx: AppContext,
  caller: Caller,
  upload: UploadToStore,
): Promise<UploadResult> {
  const { meta, files, source, prep, notes = [] } = upload;
  checkOrgSlug(caller, meta.org_url_slug);
  await assertForgeGranted(ctx, caller, meta.repo);
  const earlier = await previousUpload(ctx.db, caller, meta);
  if (earlier !== undefined) return earlier;
  const { now, rules } = startOf(ctx, meta, prep);
  const variant = meta.variant ?? '';
  let afterCommit = () => {};
  const answer = await inTransaction(ctx.db, async (trx) => {
    // An existing repository (every upload but its first) is one read, not an insert that conflicts.
    const repository =
      (await findRepo(trx, caller.orgId, repoKey(meta.repo))) ??
      (await ensureRepository(trx, caller, meta.repo, now)).repository;
    await lockRepositoryHealth(trx, repository.id);
    const again = await previousUpload(trx, caller, meta);
    if (again !== undefined) return again;
    const startVersion = await healthVersion(trx, repository.id);
    const identity = { orgSlug: caller.orgSlug, repoFullName: repoFullName(repository), variant };
    const settled = settle(
      ctx,
      prep,
      { repoId: repository.id, version: startVersion, identity, now, rules },
      files,
    );
    const { known } = settled;
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
    const toStore = await storeTests(trx, settled.files, {
      prep: settled.prep,
      repo: repository,
      orgSlug: caller.orgSlug,
      rows: { repoId: repository.id, uploadId, meta: stored },
    });
    const { attempts, rows, rewritten } = toStore;
    // Its counts reach the hour rows, and its durations the slowest tests' means, later, with other
    // uploads' (store/uploads/duration-writes.ts).
    const due = await insertAttempts(trx, { id: uploadId, repoId: repository.id, createdAt: now }, toStore);
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
      {
        rows: evaluate,
        now,
        commitShas: [meta.commit_sha],
        by: `upload ${uploadId}`,
        passBlobs: ctx.caches.passBlobs,
      },
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
    // recomputed): every bump since startVersion is this transaction's, as every writer of the
    // repository's health bumps under the health lock held here (store/tenancy/repos.ts writeTestHealth).
    const endVersion = await healthVersion(trx, repository.id);
    afterCommit = () => {
      ctx.caches.seenTests.remember(repository.id, endVersion, known, rewritten, outcome.rows);
      // In the background, so the upload's answer does not wait for it: the list is durable, and a
      // fold that fails (logged) leaves its uploads listed for the next one (means-fold.ts). What a
      // burst leaves listed is folded once the repository has been quiet for a moment.
      if (due !== 'none') ctx.caches.meansFolds.later(ctx.db, repository.id);
      ctx.caches.meansFolds.idle(ctx.db, repository.id, ctx.config.foldIdleMs);
    };
    return result;
  });
  afterCommit();
  return answer;
}
