// Who is told about each merge-queue step once it is saved: the metrics of the servers (HTTP apps)
// open on the database. One set per app (app/caches.ts, ctx.caches.queueSteps), which every writer
// of queue state in the process shares (the API's use cases, the queue runner, the GitHub and GitLab
// event processors: main.ts gives them the HTTP app's caches).
import type { QueueState } from '../../domain/queue/index.ts';

/** One saved engine step: the state as read, and as stepped (before pruning moved finished PRs out). */
export interface QueueStep {
  readonly queueId: string;
  readonly before: QueueState;
  readonly after: QueueState;
  readonly now: number;
}

export type QueueStepListener = (step: QueueStep) => void | Promise<void>;

export class QueueStepListeners {
  readonly #listeners = new Set<QueueStepListener>();

  /** Calls `listener` after every queue step saved; returns the function that stops it. */
  listen(listener: QueueStepListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * Tells the listeners about a saved step. A listener's failure is its own: it never fails the
   * request or the runner pass that made the step (the step is saved already).
   */
  async announce(step: QueueStep): Promise<void> {
    if (this.#listeners.size === 0) return;
    await Promise.allSettled([...this.#listeners].map(async (listener) => listener(step)));
  }
}
