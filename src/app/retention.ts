import { DAY_MS } from '../domain/health/index.ts';
import { allRepoIds } from '../store/tenancy/repos.ts';
import { deleteSnapshotsBefore } from '../store/tests/snapshots.ts';
import { inTransaction } from '../store/transaction.ts';
import { deleteBundleUploadsBefore } from '../store/uploads/bundles.ts';
import { deleteFailureTextsUsedBefore } from '../store/uploads/failure-texts.ts';
import { deleteUploadWithAttempts, uploadsCreatedBefore } from '../store/uploads/uploads.ts';
import type { AppContext } from './context.ts';
import { SNAPSHOT_TTL_MS } from './snapshot-paginate.ts';

/** What one retention pass deleted. */
export interface RetentionReport {
  /** Uploads older than MAINLINE_RETENTION_DAYS deleted, and their attempts. */
  readonly uploads: number;
  readonly attempts: number;
  /** Failure texts deleted with them (no kept result can have them). */
  readonly texts: number;
}

/** Expired uploads listed per query (each is then deleted in a transaction of its own). */
const PRUNE_BATCH = 100;

/**
 * Deletes the uploads created before `before`, with their attempts, one upload per transaction (a
 * large upload's attempts take a while to delete; the writer is never held for more than one),
 * oldest first, repository by repository, then the failure texts no kept result can have. The tests
 * stay, with their status and history.
 */
async function pruneResults(ctx: AppContext, before: number): Promise<RetentionReport> {
  let uploads = 0;
  let attempts = 0;
  for (const repoId of await allRepoIds(ctx.db)) {
    for (;;) {
      const old = await uploadsCreatedBefore(ctx.db, repoId, before, PRUNE_BATCH);
      for (const id of old) {
        attempts += await inTransaction(ctx.db, (trx) => deleteUploadWithAttempts(trx, id));
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
 * Deletes what has outlived its time: uploads older than MAINLINE_RETENTION_DAYS (0: kept for ever)
 * with their attempts, then expired list snapshots and bundle upload URLs.
 */
export async function applyRetention(ctx: AppContext, now: number): Promise<RetentionReport> {
  const days = ctx.config.retentionDays;
  const pruned =
    days > 0 ? await pruneResults(ctx, now - days * DAY_MS) : { uploads: 0, attempts: 0, texts: 0 };
  await deleteSnapshotsBefore(ctx.db, now - SNAPSHOT_TTL_MS);
  await deleteBundleUploadsBefore(ctx.db, now);
  return pruned;
}
