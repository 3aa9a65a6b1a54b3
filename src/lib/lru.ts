// A map that keeps its `max` most recently used entries (a Map's insertion order is the recency order).
export class Lru<V> {
  readonly #entries = new Map<string, V>();
  /**
   * The key last set or got (the most recent one), if it is still kept: getting it again moves
   * nothing, so a run of requests for one key costs one look-up each, not a delete and a re-insert.
   */
  #newest: string | undefined;

  constructor(private readonly max: number) {}

  /** The entry, marked as the most recently used. */
  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined && key !== this.#newest) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
      this.#newest = key;
    }
    return value;
  }

  /** Forgets the entry. */
  delete(key: string): void {
    this.#entries.delete(key);
    if (key === this.#newest) this.#newest = undefined;
  }

  /** Keeps the entry, dropping the least recently used one beyond `max`. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    this.#newest = key;
    if (this.#entries.size > this.max) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
      // Only when max is below 1 can the entry just set be the one dropped.
      if (oldest === key) this.#newest = undefined;
    }
  }
}
