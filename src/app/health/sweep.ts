import { listActiveTestIds, listReposWithActiveTests } from '../../store/tests/cases.ts';
import { inTransaction } from '../../store/transaction.ts';
import { lockRepositoryHealth } from '../../store/uploads/results.ts';
import type { AppContext } from '../context.ts';
import { moveFailingWindows } from '../dashboard/failing.ts';
import { applyRetention } from '../retention.ts';
import { recomputeTests } from './recompute.ts';
import { loadHealthSettings } from './settings.ts';

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
  /** Uploads folded into the slowest tests' means (app/ingest/means-fold.ts), and repositories whose fold failed. */
  readonly foldedUploads: number;
  readonly foldFailures: number;
}

/**
 * The periodic pass: re-evaluates every test with an active monitor or a manual flag, so that
 * time-based resolution (pass-on-retry recovery days, failure-count timeouts, stale failure-rate
 * monitors) happens without a new upload; then applies retention (app/retention.ts) and folds the
 * uploads still listed for the duration means, so a quiet repository's durations page need not. Idempotent:
 * several replicas running it at once only repeat work.
 */
export async function runHealthSweep(ctx: AppContext): Promise<SweepReport> {
  const now = ctx.now();
  let tests = 0;
  let statusChanges = 0;
  const repos = await listReposWithActiveTests(ctx.db);
  for (const { repo_id: repoId } of repos) {
    const ids = (await listActiveTestIds(ctx.db, repoId)).map((r) => r.id);
    for (let start = 0; start < ids.length; start += BATCH) {
      const batch = ids.slice(start, start + BATCH);
      const outcome = await inTransaction(ctx.db, async (trx) => {
        await lockRepositoryHealth(trx, repoId);
        const settings = await loadHealthSettings(trx, repoId);
        return recomputeTests(trx, repoId, batch, settings, {
          now,
          commitShas: [],
          by: 'periodic health pass',
          passBlobs: ctx.caches.passBlobs,
        });
      });
      tests += batch.length;
      statusChanges += outcome.statusChanged.length;
    }
  }
  const pruned = await applyRetention(ctx, now);
  // After retention, which takes a listed upload it deletes off the list instead of folding it.
  const folded = await ctx.caches.meansFolds.foldAll(ctx.db);
  // The dashboard's kept failing-tests windows move on with the hour (the hourly pass does it at each
  // hour's start; this catches what it missed), so a page's first read need not.
  await moveFailingWindows(ctx, now);
  return {
    repositories: repos.length,
    tests,
    statusChanges,
    prunedUploads: pruned.uploads,
    prunedAttempts: pruned.attempts,
    prunedTexts: pruned.texts,
    foldedUploads: folded.uploads,
    foldFailures: folded.failures,
  };
}
