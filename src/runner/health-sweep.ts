import type { AppContext } from '../app/context.ts';
import { recomputeTests } from '../app/health/recompute.ts';
import { loadHealthSettings } from '../app/health/settings.ts';
import { SNAPSHOT_TTL_MS } from '../app/snapshot-paginate.ts';
import { deleteBundleUploadsBefore } from '../store/bundles.ts';
import { chunked } from '../store/db.ts';
import { lockRepositoryHealth } from '../store/results.ts';
import { deleteSnapshotsBefore } from '../store/snapshots.ts';
import { listActiveTestIds, listReposWithActiveTests } from '../store/test-cases.ts';
import { type Background, runPeriodically } from './periodic.ts';

/** Tests re-evaluated per transaction, so the periodic pass never holds the writer for long. */
const BATCH = 500;

export interface SweepReport {
  readonly repositories: number;
  readonly tests: number;
  readonly statusChanges: number;
}

/**
 * The periodic pass: re-evaluates every test with an active monitor or a manual flag, so that
 * time-based resolution (pass-on-retry recovery days, failure-count timeouts, stale failure-rate
 * monitors) happens without a new upload; then drops expired list snapshots and bundle URLs.
 * Idempotent: several replicas running it at once only repeat work.
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
  await deleteSnapshotsBefore(ctx.db, now - SNAPSHOT_TTL_MS);
  await deleteBundleUploadsBefore(ctx.db, now);
  return { repositories: repos.length, tests, statusChanges };
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
      if (report.tests > 0) log.info(report, 'periodic health pass');
    },
    intervalMs,
    (err) => log.error({ err }, 'periodic health pass failed'),
  );
}
