import type { QueueState } from '../../domain/queue/index.ts';

/**
 * Parsed queue states kept by (queue id, version), least recently used dropped first: a read that finds the
 * version it just read from the database skips fetching and parsing the state (about 1 MB of JSON at 1,000
 * PRs). Safe across replicas: every save of a state bumps the row's version (store/queues.ts saveQueueState),
 * and the version is read from the database on every request, so a state another process saved is never
 * served from here. The states handed out are shared: callers only read them.
 */
export class QueueStateCache {
  readonly #max: number;
  readonly #entries = new Map<string, { version: number; state: QueueState }>();

  /** max: queues remembered at once (0 keeps none). */
  constructor(max: number) {
    this.#max = max;
  }

  get(queueId: string, version: number): QueueState | undefined {
    const hit = this.#entries.get(queueId);
    if (hit === undefined || hit.version !== version) return undefined;
    this.#entries.delete(queueId);
    this.#entries.set(queueId, hit);
    return hit.state;
  }

  set(queueId: string, version: number, state: QueueState): void {
    if (this.#max === 0) return;
    this.#entries.delete(queueId);
    this.#entries.set(queueId, { version, state });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#max) break;
      this.#entries.delete(oldest);
    }
  }
}
