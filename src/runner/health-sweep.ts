import type { AppContext } from '../app/context.ts';
import { recomputeTests } from '../app/health/recompute.ts';
import { loadHealthSettings } from '../app/health/settings.ts';
import { SNAPSHOT_TTL_MS } from '../app/snapshot-paginate.ts';
import { DAY_MS } from '../domain/health/index.ts';
import { deleteBundleUploadsBefore } from '../store/bundles.ts';
import { chunked } from '../store/db.ts';
import { deleteFailureTextsUsedBefore } from '../store/failure-texts.ts';
import { allRepoIds } from '../store/repos.ts';
import { lockRepositoryHealth } from '../store/results.ts';
import { deleteSnapshotsBefore } from '../store/snapshots.ts';
import { listActiveTestIds, listReposWithActiveTests } from '../store/test-cases.ts';
import { deleteUploadWithAttempts, uploadsCreatedBefore } from '../store/uploads.ts';
import { type Background, runPeriodically } from './periodic.ts';

/** Tests re-evaluated per transaction, so the periodic pass never holds the writer for long. */
const BATCH = 500;

export interface SweepReport {
  readonly repositories: number;
  readonly tests: number;
  readonly statusChanges: number;
  /** Uploads older than MAINLINE_RETENTION_DAYS deleted, and their attempts. */
  readonly prunedUploads: number;
  readonly prunedAttempts: number;
  /** Failure texts deleted with them (no kept result can have them). */
  readonly prunedTexts: number;
}

/** Expired uploads listed per query (each is then deleted in a transaction of its own). */
const PRUNE_BATCH = 100;

/**
 * Deletes the uploads created before `before`, with their attempts, one upload per transaction (a
 * 100k-test upload's attempts take a while to delete; the writer is never held for more than one),
 * oldest first, repository by repository, then the failure texts no kept result can have. The tests
 * stay, with their status and history.
 */
async function pruneResults(
  ctx: AppContext,
  before: number,
): Promise<{ uploads: number; attempts: number; texts: number }> {
  let uploads = 0;
  let attempts = 0;
  for (const repoId of await allRepoIds(ctx.db)) {
    for (;;) {
      const old = await uploadsCreatedBefore(ctx.db, repoId, before, PRUNE_BATCH);
      for (const id of old) {
        attempts += await ctx.db.transaction().execute((trx) => deleteUploadWithAttempts(trx, id));
        uploads++;
      }
      if (old.length < PRUNE_BATCH) break;
    }
  }
  // Every upload created before `before` is gone now: so is every result that had a text last used
  // before it.
  const texts = await deleteFailureTextsUsedBefore(ctx.db, before);
  return { uploads, attempts, texts };
}

/**
 * The periodic pass: re-evaluates every test with an active monitor or a manual flag, so that
 * time-based resolution (pass-on-retry recovery days, failure-count timeouts, stale failure-rate
 * monitors) happens without a new upload; then deletes uploads older than MAINLINE_RETENTION_DAYS
 * with their attempts, and expired list snapshots and bundle URLs. Idempotent: several replicas
 * running it at once only repeat work.
 */
export async function runHealthSweep(ctx: AppContext): Promise<SweepReport> {
  const now = ctx.now();
  let tests = 0;
  let statusChanges = 0;
  const repos = await listReposWithActiveTests(ctx.db);
  for (const { repo_id: repoId } of repos) {
    const ids = (await listActiveTestIds(ctx.db, repoId)).map((r) => r.id);
    for (const batch of chunked(ids, BATCH)) {
      const outcome = await ctx.db.transaction().execute(async (trx) => {
        await lockRepositoryHealth(trx, repoId);
        const settings = await loadHealthSettings(trx, repoId);
        return recomputeTests(trx, repoId, batch, settings, {
          now,
          commitShas: [],
          by: 'periodic health pass',
        });
      });
      tests += batch.length;
      statusChanges += outcome.statusChanged.length;
    }
  }
  const retention = ctx.config.retentionDays;
  const pruned =
    retention > 0 ? await pruneResults(ctx, now - retention * DAY_MS) : { uploads: 0, attempts: 0, texts: 0 };
  await deleteSnapshotsBefore(ctx.db, now - SNAPSHOT_TTL_MS);
  await deleteBundleUploadsBefore(ctx.db, now);
  return {
    repositories: repos.length,
    tests,
    statusChanges,
    prunedUploads: pruned.uploads,
    prunedAttempts: pruned.attempts,
    prunedTexts: pruned.texts,
  };
}

/** Runs the pass every `intervalMs` (never two at once); errors are logged and the next run tries again. */
export function startHealthSweep(
  ctx: AppContext,
  intervalMs: number,
  log: { info(o: object, m: string): void; error(o: object, m: string): void },
): Background {
  return runPeriodically(
    async () => {
      const report = await runHealthSweep(ctx);
      if (report.tests > 0 || report.prunedUploads > 0) log.info(report, 'periodic health pass');
    },
    intervalMs,
    (err) => log.error({ err }, 'periodic health pass failed'),
  );
}
