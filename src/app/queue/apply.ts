import type { Kysely } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import {
  nextWakeAt,
  pruneHistory,
  type QueueAction,
  type QueueEvent,
  type QueueState,
  step,
} from '../../domain/queue/index.ts';
import { archive } from '../../store/queue-archive.ts';
import { findQueueByIdForUpdate, insertActions, type QueueRow, saveQueueState } from '../../store/queues.ts';
import type { Tables } from '../../store/schema.ts';
import type { Forge } from '../ports.ts';
import { enqueueQueueEvents } from '../webhooks-out/queue.ts';
import { announceQueueStep } from './step-listeners.ts';

/** A queue row with its state parsed. */
export interface LoadedQueue {
  readonly row: QueueRow;
  readonly state: QueueState;
}

export function loadState(row: QueueRow): LoadedQueue {
  return { row, state: JSON.parse(row.state) as QueueState };
}

/**
 * How often a save may lose a race to another writer before giving up (each retry re-reads). The row is
 * locked while it is read (findQueueByIdForUpdate), so a lost race needs a writer that bypassed the lock.
 */
const MAX_ATTEMPTS = 8;

/** Answered 409 with Retry-After, never a 5xx: the request was valid and may simply be sent again. */
export class QueueConflictError extends AppError {
  constructor(queueId: string) {
    super('CONFLICT', `queue ${queueId} is being changed by others; send the request again`, {
      headers: { 'retry-after': '1' },
    });
  }
}

/**
 * When the runner should tick the queue next. The engine reports a batching wait that has already
 * passed while no slot is free to start the batch; ticking then changes nothing (the freed slot's
 * own event starts it), so only a time still ahead is stored.
 */
function futureWake(state: QueueState, now: number): number | null {
  const at = nextWakeAt(state);
  return at !== null && at > now ? at : null;
}

/**
 * Feeds one event to the engine and stores the outcome: the new state (only if nobody saved since it
 * was read: optimistic concurrency on `version`, retried on a lost race) and the actions it asked for,
 * in an outbox the runner carries out. Finished PRs and runs nothing refers to any more move from the
 * state to the archive (so the state stays the size of the live queue). All in one transaction, so a crash
 * loses neither; actions are idempotent, so repeating one after a crash is harmless. Once committed,
 * the step is announced to its listeners (step-listeners.ts: the metrics).
 */
export async function applyEvent(
  db: Kysely<Tables>,
  queueId: string,
  event: QueueEvent,
  now: number,
): Promise<{ state: QueueState; actions: QueueAction[] }> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const outcome = await db.transaction().execute(async (trx) => {
      const row = await findQueueByIdForUpdate(trx, queueId);
      if (row === undefined) throw new Error(`queue ${queueId} vanished`);
      const before = loadState(row).state;
      const stepped = step(before, event, now);
      const pruned = pruneHistory(stepped.state);
      const result = { state: pruned.state, actions: stepped.actions };
      const saved = await saveQueueState(trx, queueId, row.version, {
        state: JSON.stringify(result.state),
        wake_at: futureWake(result.state, now),
        updated_at: now,
      });
      if (!saved) return undefined;
      await archive(trx, queueId, pruned.prs, pruned.runs, now);
      await enqueueQueueEvents(trx, row, stepped.state, now);
      await insertActions(
        trx,
        queueId,
        result.actions.map((a) => JSON.stringify(a)),
        now,
      );
      return { result, before, after: stepped.state };
    });
    if (outcome !== undefined) {
      // After the commit: what listeners (the metrics) count has happened for good.
      await announceQueueStep(db, { queueId, before: outcome.before, after: outcome.after, now });
      return outcome.result;
    }
  }
  throw new QueueConflictError(queueId);
}

/** The engine event for what the forge says the required statuses are. */
export function discoveredEvent(found: Awaited<ReturnType<Forge['requiredStatuses']>>): QueueEvent {
  return {
    type: 'required_statuses_discovered',
    serviceConfig: found.serviceConfig,
    branchProtection: found.branchProtection,
  };
}
