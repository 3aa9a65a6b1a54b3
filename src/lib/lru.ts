// A map that keeps its `max` most recently used entries (a Map's insertion order is the recency order).
export class Lru<V> {
  readonly #entries = new Map<string, V>();

  constructor(private readonly max: number) {}

  /** The entry, marked as the most recently used. */
  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  /** Forgets the entry. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Keeps the entry, dropping the least recently used one beyond `max`. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value as string);
  }
}
