// The upload_passes blob format exactly as migration 0012 wrote and read it, copied here so that the
// migration keeps meaning what it meant when it shipped whatever store/uploads/pass-codec.ts becomes. Written
// plainly rather than fast: it runs once per database. Do not change it; a new format needs a new
// migration (with its own frozen copy).
//
// `ordinals`: the passing tests' ordinals, sorted (a test once per pass, its passes in the order they
// came), int32 little-endian. `details`, for the same positions: each pass's time as ms after the
// upload's earliest pass (uint32), then its retry index (int32), then its duration in ms (int32, -1:
// none), each column whole before the next.
import os from 'node:os';

if (os.endianness() !== 'LE') throw new Error('upload_passes blobs are little-endian typed arrays');

export interface PassEntryV1 {
  readonly ordinal: number;
  readonly at: number;
  readonly retryIndex: number;
  readonly durationMs: number | null;
}

export interface PassBlobsV1 {
  readonly count: number;
  readonly atMin: number;
  readonly atMax: number;
  readonly ordinals: Uint8Array;
  readonly details: Uint8Array;
}

const MAX_SPAN_MS = 0xffff_ffff;

export function encodePassesV1(entries: readonly PassEntryV1[]): PassBlobsV1 {
  const n = entries.length;
  let atMin = n === 0 ? 0 : Number.POSITIVE_INFINITY;
  let atMax = n === 0 ? 0 : Number.NEGATIVE_INFINITY;
  for (const { at } of entries) {
    atMin = Math.min(atMin, at);
    atMax = Math.max(atMax, at);
  }
  if (atMax - atMin > MAX_SPAN_MS)
    throw new Error(`the passes of one upload span more than ${MAX_SPAN_MS} ms`);
  // A stable sort by ordinal keeps each test's passes in the order they came.
  const sorted = entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.ordinal - b.entry.ordinal || a.index - b.index)
    .map(({ entry }) => entry);
  const ordinals = new Int32Array(n);
  const atOffsets = new Uint32Array(n);
  const retries = new Int32Array(n);
  const durations = new Int32Array(n);
  sorted.forEach((e, k) => {
    ordinals[k] = e.ordinal;
    atOffsets[k] = e.at - atMin;
    retries[k] = e.retryIndex;
    durations[k] = e.durationMs === null ? -1 : Math.min(e.durationMs, 0x7fff_ffff);
  });
  const details = new Uint8Array(n * 12);
  details.set(new Uint8Array(atOffsets.buffer), 0);
  details.set(new Uint8Array(retries.buffer), n * 4);
  details.set(new Uint8Array(durations.buffer), n * 8);
  return { count: n, atMin, atMax, ordinals: new Uint8Array(ordinals.buffer), details };
}

/** A copy of `bytes` in a buffer of its own, aligned for typed-array views. */
function aligned(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

export function decodeOrdinalsV1(bytes: Uint8Array): Int32Array {
  if (bytes.byteLength % 4 !== 0) throw new Error('a corrupt upload_passes.ordinals blob');
  return new Int32Array(aligned(bytes));
}

export function decodeDetailsV1(
  bytes: Uint8Array,
  count: number,
): { atOffsets: Uint32Array; retries: Int32Array; durations: Int32Array } {
  if (bytes.byteLength !== count * 12) throw new Error('a corrupt upload_passes.details blob');
  const buffer = aligned(bytes);
  return {
    atOffsets: new Uint32Array(buffer, 0, count),
    retries: new Int32Array(buffer, count * 4, count),
    durations: new Int32Array(buffer, count * 8, count),
  };
}
