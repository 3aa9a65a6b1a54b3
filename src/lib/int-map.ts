/**
 * A map from integers to values kept as two arrays sorted by key. It lists its values in ascending key
 * order (as a plain object with integer keys does), copies as two array slices and looks a key up by
 * binary search, whatever the keys are. A plain object keyed by numbers as a forge hands them out
 * (40,007, 40,014, …) is kept by V8 as a dictionary: copying one of 1,000 entries costs ~480 µs and
 * listing its values ~165 µs, against ~2 and ~6 µs for the keys 1..1,000 (docs/benchmarks-queue.md).
 *
 * It serialises (toJSON) as that plain object, so JSON written from it is what the object gave. Frozen
 * (freeze), it throws on a write. Its arrays are private: a frozen array is several times slower to
 * copy and to search in V8, so freezing the map freezes neither.
 */
export class IntMap<V> {
  /** Keys, ascending. */
  #ks: number[];
  /** #vs[i] is the value of #ks[i]. */
  #vs: V[];
  /**
   * Index of the last key found: lookups mostly walk the keys in order (a queue's PRs in queue order),
   * so the next key is there or just after it (or just before, walking back). Only a hint, checked on use (a frozen map still moves it).
   */
  #finger = 0;
  /** Writes so far (set, delete): what was derived from the map holds while this stays the same. */
  #version = 0;

  constructor(ks: number[] = [], vs: V[] = []) {
    this.#ks = ks;
    this.#vs = vs;
  }

  /** The map of a plain object's integer keys (as JSON.parse gives it). */
  static fromRecord<V>(record: Readonly<Record<string, V>>): IntMap<V> {
    const map = new IntMap<V>();
    for (const key of Object.keys(record)) {
      const k = Number(key);
      if (!Number.isSafeInteger(k) || String(k) !== key)
        throw new Error(`IntMap: key ${key} is not an integer`);
      map.set(k, record[key] as V);
    }
    return map;
  }

  /** How many writes the map has had: equal, it holds what it held (for indexes kept beside it). */
  get version(): number {
    return this.#version;
  }

  get size(): number {
    return this.#ks.length;
  }

  /** Index of the first key ≥ k (size when none). */
  #at(k: number): number {
    const ks = this.#ks;
    let hi = ks.length;
    // New keys are mostly the largest yet (PR numbers only grow): one comparison.
    if (hi === 0 || (ks[hi - 1] as number) < k) return hi;
    let lo = 0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ks[mid] as number) < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Where k would be if the keys were evenly spaced between the first and the last: exact for PR
   * numbers handed out in steps (1..n, or a forge's 40,007 + 7n), so most lookups skip the binary
   * search. Only a guess, checked by the caller (an index in range, or 0).
   */
  #guess(k: number): number {
    const ks = this.#ks;
    const last = ks.length - 1;
    if (last <= 0) return 0;
    const lo = ks[0] as number;
    const span = (ks[last] as number) - lo;
    if (k <= lo || span <= 0) return 0;
    if (k - lo >= span) return last;
    return Math.floor(((k - lo) * last) / span);
  }

  get(k: number): V | undefined {
    const ks = this.#ks;
    let i = this.#finger;
    if (ks[i] !== k) {
      // The next key (a walk in order) or the one before (a walk back, as graph.ts: reachBack does).
      i += 1;
      if (ks[i] !== k) {
        i -= 2;
        if (i < 0 || ks[i] !== k) {
          i = this.#guess(k);
          if (ks[i] !== k) {
            i = this.#at(k);
            if (ks[i] !== k) return undefined;
          }
        }
      }
      this.#finger = i;
    }
    return this.#vs[i];
  }

  has(k: number): boolean {
    return this.#ks[this.#at(k)] === k;
  }

  /** The i-th key in ascending order (0 ≤ i < size), for walks beside another map. */
  keyAt(i: number): number {
    return this.#ks[i] as number;
  }

  /** The value of keyAt(i). */
  valueAt(i: number): V {
    return this.#vs[i] as V;
  }

  #writable(): void {
    if (Object.isFrozen(this)) throw new TypeError('IntMap: the map is frozen');
  }

  /** Set in place. */
  set(k: number, v: V): this {
    this.#writable();
    this.#version += 1;
    // Mostly a key just looked up (a PR entry replaced by its copy): the finger is on it.
    const f = this.#finger;
    const i = this.#ks[f] === k ? f : this.#at(k);
    if (this.#ks[i] === k) this.#vs[i] = v;
    else if (i === this.#ks.length) {
      this.#ks.push(k);
      this.#vs.push(v);
    } else {
      this.#ks.splice(i, 0, k);
      this.#vs.splice(i, 0, v);
    }
    return this;
  }

  /** Delete in place; whether the key was there. */
  delete(k: number): boolean {
    this.#writable();
    this.#version += 1;
    const i = this.#at(k);
    if (this.#ks[i] !== k) return false;
    this.#ks.splice(i, 1);
    this.#vs.splice(i, 1);
    return true;
  }

  /** The values in ascending key order: a new array (like Object.values). */
  values(): V[] {
    return this.#vs.slice();
  }

  /** The keys, ascending: a new array. */
  keys(): number[] {
    return this.#ks.slice();
  }

  /** [key, value] pairs in ascending key order (as a Map iterates; test matchers compare maps by it). */
  *[Symbol.iterator](): IterableIterator<[number, V]> {
    for (let i = 0; i < this.#ks.length; i += 1) yield [this.#ks[i] as number, this.#vs[i] as V];
  }

  /** A map of its own (not frozen) with the same values, which are shared. */
  copy(): IntMap<V> {
    return new IntMap(this.#ks.slice(), this.#vs.slice());
  }

  /** Freeze the map (writes throw), after passing each value to `freezeValue` when given. */
  freeze(freezeValue?: (v: V) => unknown): this {
    if (freezeValue !== undefined) for (const v of this.#vs) freezeValue(v);
    return Object.freeze(this);
  }

  /** The plain object with the same keys and values (JSON.stringify calls it). */
  toJSON(): Record<string, V> {
    const out: Record<string, V> = {};
    for (let i = 0; i < this.#ks.length; i += 1) out[this.#ks[i] as number] = this.#vs[i] as V;
    return out;
  }
}
