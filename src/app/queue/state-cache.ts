import type { QueueState } from '../../domain/queue/index.ts';

/**
 * Parsed queue states kept by (queue id, version), least recently used dropped first: a read or an engine
 * step that finds the version it just read from the database skips fetching and parsing the state's rows.
 * Safe across replicas: every save of a state bumps the row's version (store/queues.ts saveQueueState),
 * and the version is read from the database each time, so a state another process saved is never served
 * from here. The states handed out are shared and frozen (deepFreeze): a write to one throws.
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

/** Queues remembered per database handle when no app context chose a size. */
const DEFAULT_SIZE = 16;

const byHandle = new WeakMap<object, QueueStateCache>();

/**
 * The cache of states read or saved through a database handle. It hangs off the handle (as the step
 * listeners do) because every writer of queue state in the process (API, runner, GitHub events) shares
 * the handle whatever context it was built with. `preferred` (the app context's, sized from the config)
 * replaces a default one.
 */
export function queueStateCacheOf(db: object, preferred?: QueueStateCache): QueueStateCache {
  const known = byHandle.get(db);
  if (preferred !== undefined && known !== preferred) {
    byHandle.set(db, preferred);
    return preferred;
  }
  if (known !== undefined) return known;
  const made = new QueueStateCache(DEFAULT_SIZE);
  byHandle.set(db, made);
  return made;
}

/**
 * Freezes a state and everything in it, so code that writes to a shared state throws instead of
 * changing what other readers and the next engine step see. An object already frozen is taken as frozen
 * all the way down (this function freezes children first), so a stepped state, which shares its
 * unchanged entries and runs with the state it came from, costs only what the step copied.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return Object.freeze(value);
}
