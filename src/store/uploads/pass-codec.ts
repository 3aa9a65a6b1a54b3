// The passes of one upload as stored in `upload_passes` (migration 0012): two blobs of little-endian
// typed arrays instead of a row per pass. `ordinals` holds the passing tests' ordinals
// (test_cases.ordinal), sorted, a test once per pass; `details` holds, for the same positions, each
// pass's time as milliseconds after the upload's earliest pass (uint32), its retry index (int32) and
// its duration in ms (int32, -1: none). A reader that only counts passes reads the first blob; the
// second is read when times matter. Uploads never change once stored, so readers may keep decoded
// blobs (passes.ts).
import os from 'node:os';

if (os.endianness() !== 'LE') throw new Error('upload_passes blobs are little-endian typed arrays');

/** One passing attempt, as ingestion hands it over. */
export interface PassEntry {
  readonly ordinal: number;
  readonly at: number;
  readonly retryIndex: number;
  readonly durationMs: number | null;
}

/** The decoded passes of one upload, in ordinal order (a test's passes in the order they came). */
export interface UploadPassSet {
  readonly ordinals: Int32Array;
  /** The earliest pass's time: `at[i]` is `atMin + atOffsets[i]`. */
  readonly atMin: number;
  readonly atMax: number;
}

export interface PassDetails {
  readonly atOffsets: Uint32Array;
  readonly retries: Int32Array;
  readonly durations: Int32Array;
}

export interface EncodedPasses {
  readonly count: number;
  readonly atMin: number;
  readonly atMax: number;
  readonly ordinals: Uint8Array;
  readonly details: Uint8Array;
}

/** Times of one upload's passes may span at most this much (ingestion keeps them within ~30 days). */
const MAX_SPAN_MS = 0xffff_ffff;

/**
 * Passes as ingestion gathers them: a column per field in typed arrays that grow (an upload holds
 * ~100k passes; an object each cost their allocation and made encoding them several times slower).
 */
export class PassList {
  #n = 0;
  #ordinals = new Int32Array(1024);
  #at = new Float64Array(1024);
  #retries = new Int32Array(1024);
  /** -1: no duration. */
  #durations = new Int32Array(1024);

  static of(entries: readonly PassEntry[]): PassList {
    const list = new PassList();
    for (const e of entries) list.push(e.ordinal, e.at, e.retryIndex, e.durationMs);
    return list;
  }

  get length(): number {
    return this.#n;
  }

  push(ordinal: number, at: number, retryIndex: number, durationMs: number | null): void {
    const i = this.#n;
    if (i === this.#ordinals.length) this.#grow(i * 2);
    this.#ordinals[i] = ordinal;
    this.#at[i] = at;
    this.#retries[i] = retryIndex;
    this.#durations[i] = durationMs === null ? -1 : Math.min(durationMs, 0x7fff_ffff);
    this.#n = i + 1;
  }

  /** Appends every pass of `other`. */
  append(other: PassList): void {
    const n = this.#n + other.#n;
    if (n > this.#ordinals.length) this.#grow(Math.max(n, this.#ordinals.length * 2));
    this.#ordinals.set(other.#ordinals.subarray(0, other.#n), this.#n);
    this.#at.set(other.#at.subarray(0, other.#n), this.#n);
    this.#retries.set(other.#retries.subarray(0, other.#n), this.#n);
    this.#durations.set(other.#durations.subarray(0, other.#n), this.#n);
    this.#n = n;
  }

  #grow(size: number): void {
    const grow = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(size);
      b.set(a.subarray(0, this.#n));
      return b;
    };
    this.#ordinals = grow(this.#ordinals, (n) => new Int32Array(n));
    this.#at = grow(this.#at, (n) => new Float64Array(n));
    this.#retries = grow(this.#retries, (n) => new Int32Array(n));
    this.#durations = grow(this.#durations, (n) => new Int32Array(n));
  }

  /** Encodes the passes (given in any order; a test's passes keep their relative order). */
  encode(): EncodedPasses {
    const n = this.#n;
    const at = this.#at;
    const ords = this.#ordinals;
    let atMin = Number.POSITIVE_INFINITY;
    let atMax = Number.NEGATIVE_INFINITY;
    let maxOrdinal = -1;
    for (let i = 0; i < n; i++) {
      const t = at[i] as number;
      if (t < atMin) atMin = t;
      if (t > atMax) atMax = t;
      const o = ords[i] as number;
      if (o > maxOrdinal) maxOrdinal = o;
    }
    if (n === 0) atMin = atMax = 0;
    if (atMax - atMin > MAX_SPAN_MS)
      throw new Error(`the passes of one upload span more than ${MAX_SPAN_MS} ms`);
    // Positions by ordinal, stably (a counting sort: ordinals are small, dense integers).
    const starts = new Int32Array(maxOrdinal + 2);
    for (let i = 0; i < n; i++) {
      const o = (ords[i] as number) + 1;
      starts[o] = (starts[o] as number) + 1;
    }
    for (let o = 1; o < starts.length; o++) starts[o] = (starts[o] as number) + (starts[o - 1] as number);
    const ordinals = new Int32Array(n);
    const atOffsets = new Uint32Array(n);
    const retries = new Int32Array(n);
    const durations = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const o = ords[i] as number;
      const k = starts[o] as number;
      starts[o] = k + 1;
      ordinals[k] = o;
      atOffsets[k] = (at[i] as number) - atMin;
      retries[k] = this.#retries[i] as number;
      durations[k] = this.#durations[i] as number;
    }
    const details = new Uint8Array(n * 12);
    details.set(new Uint8Array(atOffsets.buffer), 0);
    details.set(new Uint8Array(retries.buffer), n * 4);
    details.set(new Uint8Array(durations.buffer), n * 8);
    return { count: n, atMin, atMax, ordinals: new Uint8Array(ordinals.buffer), details };
  }
}

/** Encodes passes given in any order; a test's passes keep their relative order. */
export function encodePasses(entries: readonly PassEntry[] | PassList): EncodedPasses {
  return (entries instanceof PassList ? entries : PassList.of(entries)).encode();
}

/** A copy of `bytes` in a buffer of its own, aligned for typed-array views. */
function aligned(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

export function decodeOrdinals(bytes: Uint8Array, atMin: number, atMax: number): UploadPassSet {
  if (bytes.byteLength % 4 !== 0) throw new Error('a corrupt upload_passes.ordinals blob');
  return { ordinals: new Int32Array(aligned(bytes)), atMin, atMax };
}

export function decodeDetails(bytes: Uint8Array, count: number): PassDetails {
  if (bytes.byteLength !== count * 12) throw new Error('a corrupt upload_passes.details blob');
  const buffer = aligned(bytes);
  return {
    atOffsets: new Uint32Array(buffer, 0, count),
    retries: new Int32Array(buffer, count * 4, count),
    durations: new Int32Array(buffer, count * 8, count),
  };
}

/** The first position in `sorted` whose value is ≥ `value`. */
export function lowerBound(sorted: Int32Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The positions [from, to) of `ordinal`'s passes in a sorted ordinals array. */
export function passRange(sorted: Int32Array, ordinal: number): [number, number] {
  const from = lowerBound(sorted, ordinal);
  let to = from;
  while (to < sorted.length && sorted[to] === ordinal) to++;
  return [from, to];
}
