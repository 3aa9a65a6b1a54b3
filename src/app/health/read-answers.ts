// The JSON of read answers (get-test-details, list-failing-tests, list-unhealthy-tests and
// list-quarantined-tests pages), one cache per route on the app (app/caches.ts, sized by
// MAINLINE_KEPT_PAGES and MAINLINE_KEPT_DETAILS), by a key that names everything an answer depends
// on: the repository's version (health_version, which every write to its test health bumps, or
// rollups.ts `readVersion` for rollup reads), the hour the windows count from (they are whole
// hours), the request and the link prefix.
// The version is read from the database for every request (on PostgreSQL by a statement concurrent
// requests share only if it was sent after they all arrived), so replicas sharing one PostgreSQL stay
// exact; on SQLite it is read again only when something was committed since it was read
// (UnchangedReads, below), which the reader connection's data_version tells without a query. An answer holding page tokens of a list snapshot is kept only while a fresh answer would
// hand out the same tokens (`until`), so a kept answer never gives tokens that expire sooner. Kept
// as UTF-8 bytes: sent without encoding 100 KB again, and outside the collected heap.
import { changeStamp } from '../../db/change-stamp.ts';
import { FreshReads } from '../../lib/fresh-reads.ts';
import { Lru } from '../../lib/lru.ts';

/** An answer as its use case makes it: the value to serialize, and until when it may be reused. */
export interface Made<T> {
  readonly value: T;
  /** Epoch ms after which the answer is made again (Infinity: while the key names it). */
  readonly until: number;
}

export class ReadAnswers {
  readonly #answers: Lru<{ bytes: Buffer; until: number }>;

  constructor(max: number) {
    this.#answers = new Lru(Math.max(1, max));
  }

  /** The JSON bytes of the answer named `key` at `now`: kept, or made, serialized and kept. */
  async bytes<T>(
    key: string,
    now: number,
    make: () => Promise<Made<T>>,
    serialize: (value: T) => string,
  ): Promise<Buffer> {
    const held = this.#answers.get(key);
    if (held !== undefined && now <= held.until) return held.bytes;
    const made = await make();
    const bytes = Buffer.from(serialize(made.value));
    if (now <= made.until) this.#answers.set(key, { bytes, until: made.until });
    return bytes;
  }
}

/**
 * Small values read from the database (a repository's versions, its quarantine settings, the bytes of
 * get-repository-settings' answers, which have no version to key them by), kept with
 * the database's change stamp (db/change-stamp.ts) taken before each was read: a kept one is given
 * while the stamp is the same, i.e. while nothing was committed by any connection or process since
 * it was read, so it is exactly what a query would answer now. Without a stamp (PostgreSQL, where
 * another replica's commit is seen only by asking) every call reads, but concurrent calls of one key
 * share a statement sent after they all asked (lib/fresh-reads.ts): its snapshot, taken when it
 * runs, holds every commit made before any of them arrived. One per app (app/caches.ts).
 */
export class UnchangedReads {
  readonly #held: Lru<{ readonly stamp: number; readonly value: unknown }> | undefined;
  /** Reads running per database object: a transaction's reads are never shared with others'. */
  readonly #reading = new WeakMap<object, FreshReads<unknown>>();

  /** At most `max` values; 0 keeps none. */
  constructor(max: number) {
    this.#held = max > 0 ? new Lru(max) : undefined;
  }

  /** The value named `key` (which must name everything `read` depends on), kept or read. */
  async get<T>(db: object, key: string, read: () => Promise<T>): Promise<T> {
    // Taken before reading: a commit after it changes the stamp, so a value it names is never stale.
    const stamp = this.#held === undefined ? undefined : changeStamp(db);
    if (stamp === undefined || this.#held === undefined) return this.#fresh(db, key, read);
    const held = this.#held.get(key);
    if (held !== undefined && held.stamp === stamp) return held.value as T;
    const value = await read();
    this.#held.set(key, { stamp, value });
    return value;
  }

  #fresh<T>(db: object, key: string, read: () => Promise<T>): Promise<T> {
    let reads = this.#reading.get(db);
    if (reads === undefined) {
      reads = new FreshReads<unknown>();
      this.#reading.set(db, reads);
    }
    // A shared read's error is its first caller's (say, a missing repository named as that caller
    // spelled it): every other caller reads on its own then, as without sharing.
    let own = false;
    const mine = () => {
      own = true;
      return read();
    };
    return (reads.run(key, mine) as Promise<T>).catch((error: unknown) => {
      if (own) throw error;
      return read();
    });
  }
}
