import { Lru } from '../../lib/lru.ts';

/**
 * getQueue's serialized answers, one per queue, by a key naming everything the answer depends on
 * (reads.ts queueRead: the state's version, which every save of the state bumps, the queue row's label
 * columns and the flake protection shown). The key is built from the database row and the forge settings
 * read on every request, so an answer another replica's write made stale is never sent; a queue keeps
 * only the answer of its latest key, so a busy queue does not crowd the others out. Kept as UTF-8
 * bytes: a queue of 1,000 PRs answers ~320 KB, sent without listing, shaping and encoding it again.
 * Least recently used queues are dropped first (app/caches.ts, MAINLINE_KEPT_QUEUES; 0 keeps none).
 */
export class KeptQueueAnswers {
  readonly #max: number;
  readonly #answers: Lru<{ readonly key: string; readonly bytes: Buffer }>;

  constructor(max: number) {
    this.#max = max;
    this.#answers = new Lru(Math.max(1, max));
  }

  /** The bytes of queue `queueId`'s answer named `key`: kept, or serialized now and kept. */
  bytes(queueId: string, key: string, serialize: () => string): Buffer {
    const held = this.#answers.get(queueId);
    if (held?.key === key) return held.bytes;
    const bytes = Buffer.from(serialize());
    if (this.#max > 0) this.#answers.set(queueId, { key, bytes });
    return bytes;
  }
}
