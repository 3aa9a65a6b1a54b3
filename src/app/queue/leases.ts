import {
  acquireLease,
  listQueues,
  pendingActions,
  queuesNeedingWork,
  queuesWithLivePrs,
  releaseLease,
} from '../../store/queue/queues.ts';
import type { AppContext } from '../context.ts';

/** Ids of the queues worth a runner pass: outbox actions or a due timer, or PRs to watch on the forge. */
export async function queuesToDrive(ctx: AppContext, now: number): Promise<string[]> {
  const busy = new Set(await queuesNeedingWork(ctx.db, now));
  const live = await queuesWithLivePrs(ctx.db);
  return (await listQueues(ctx.db, undefined))
    .filter((q) => busy.has(q.id) || live.has(q.id))
    .map((q) => q.id);
}

/** Takes or renews the queue's lease for `owner` until `until`; false when another runner holds it. */
export function takeQueueLease(
  ctx: AppContext,
  queueId: string,
  owner: string,
  now: number,
  until: number,
): Promise<boolean> {
  return acquireLease(ctx.db, queueId, owner, now, until);
}

/** Gives the queue's lease up, if `owner` holds it. */
export function releaseQueueLease(ctx: AppContext, queueId: string, owner: string): Promise<void> {
  return releaseLease(ctx.db, queueId, owner);
}

/** The queue's outbox actions not done yet and due (one waiting on the forge is passed over), oldest first. */
export function pendingQueueActions(ctx: AppContext, queueId: string, limit: number) {
  return pendingActions(ctx.db, queueId, limit, ctx.now());
}
