import type { QueueState } from '../../domain/queue/index.ts';
import { IntMap } from '../../lib/int-map.ts';

/**
 * Parsed queue states kept by (queue id, version), least recently used dropped first: a read or an engine
 * step that finds the version it just read from the database skips fetching and parsing the state's rows.
 * Safe across replicas: every save of a state bumps the row's version (store/queue/queues.ts saveQueueState),
 * and the version is read from the database each time, so a state another process saved is never served
 * from here. The states handed out are shared and frozen (deepFreeze): a write to one throws. One per
 * app (app/caches.ts, MAINLINE_QUEUE_STATE_CACHE), shared by every reader and writer of queue state.
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

/**
 * Freezes a state and everything in it, so code that writes to a shared state throws instead of
 * changing what other readers and the next engine step see. An object already frozen is taken as frozen
 * all the way down (this function freezes children first), so a stepped state, which shares its
 * unchanged entries and runs with the state it came from, costs only what the step copied.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (value instanceof IntMap) return value.freeze(deepFreeze);
  if (Array.isArray(value)) {
    // By index, without a copy: the queue's order holds a number per PR.
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (typeof child === 'object') deepFreeze(child);
    }
  } else {
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return Object.freeze(value);
}
