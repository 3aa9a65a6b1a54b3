// A map that keeps its most recently used entries up to a total weight (each entry's weight given
// when it is set), dropping the least recently used first; an entry heavier than the whole limit is
// not kept.
export class WeighedLru<V> {
  readonly #entries = new Map<string, { value: V; weight: number }>();
  #total = 0;

  constructor(private readonly max: number) {}

  /** The entry, marked as the most recently used. */
  get(key: string): V | undefined {
    const held = this.#entries.get(key);
    if (held === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, held);
    return held.value;
  }

  /** Keeps the entry (replacing one of the same key), then drops the least recently used beyond the limit. */
  set(key: string, value: V, weight: number): void {
    this.delete(key);
    if (weight > this.max) return;
    this.#entries.set(key, { value, weight });
    this.#total += weight;
    for (const k of this.#entries.keys()) {
      if (this.#total <= this.max) break;
      this.delete(k);
    }
  }

  /** Forgets the entry. */
  delete(key: string): void {
    const held = this.#entries.get(key);
    if (held === undefined) return;
    this.#total -= held.weight;
    this.#entries.delete(key);
  }
}
