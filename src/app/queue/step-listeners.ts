// Who is told about each merge-queue step once it is saved: the metrics of the servers (HTTP apps)
// open on the database. Listeners hang off the database handle rather than the AppContext because
// every writer of queue state in the process (the API's use cases, the queue runner, the GitHub event
// processor) shares the handle, whichever context it was given.
import type { Kysely } from 'kysely';
import type { QueueState } from '../../domain/queue/index.ts';
import type { Tables } from '../../store/schema.ts';

/** One saved engine step: the state as read, and as stepped (before pruning moved finished PRs out). */
export interface QueueStep {
  readonly queueId: string;
  readonly before: QueueState;
  readonly after: QueueState;
  readonly now: number;
}

export type QueueStepListener = (step: QueueStep) => void | Promise<void>;

const listeners = new WeakMap<Kysely<Tables>, Set<QueueStepListener>>();

/** Calls `listener` after every queue step saved through `db`; returns the function that stops it. */
export function listenToQueueSteps(db: Kysely<Tables>, listener: QueueStepListener): () => void {
  let set = listeners.get(db);
  if (set === undefined) {
    set = new Set();
    listeners.set(db, set);
  }
  set.add(listener);
  return () => {
    listeners.get(db)?.delete(listener);
  };
}

/**
 * Tells the listeners about a saved step. A listener's failure is its own: it never fails the
 * request or the runner pass that made the step (the step is saved already).
 */
export async function announceQueueStep(db: Kysely<Tables>, step: QueueStep): Promise<void> {
  const set = listeners.get(db);
  if (set === undefined || set.size === 0) return;
  await Promise.allSettled([...set].map(async (listener) => listener(step)));
}
