// test_run_hours rows from attempts: per (hour, test) the passes of an encoded pass list and an
// upload's failed and skipped results, summed in memory before store/uploads/rollups-write.ts upserts them.
import type { EncodedPasses } from './pass-codec.ts';
import { hourOf } from './rollups.ts';

/** A failed or skipped attempt as the rollups need it. */
export interface RollupResult {
  readonly test_case_id: string;
  readonly at: number;
  readonly outcome: string;
  readonly quarantined: number;
  readonly failure_fingerprint?: string | null | undefined;
  readonly failure_summary?: string | null | undefined;
  readonly duration_ms?: number | null | undefined;
}

/**
 * Per (hour, ordinal): passed, failed, failed while quarantined, skipped, summed durations (ms) and
 * how many attempts had one.
 */
type RunSum = [number, number, number, number, number, number];
export type RunSums = Map<number, Map<number, RunSum>>;

function runSum(sums: RunSums, hour: number, ordinal: number): RunSum {
  let byOrdinal = sums.get(hour);
  if (byOrdinal === undefined) {
    byOrdinal = new Map();
    sums.set(hour, byOrdinal);
  }
  let sum = byOrdinal.get(ordinal);
  if (sum === undefined) {
    sum = [0, 0, 0, 0, 0, 0];
    byOrdinal.set(ordinal, sum);
  }
  return sum;
}

/** Adds the passes of an encoded pass list (pass-codec.ts) to `sums`. */
export function addPasses(sums: RunSums, passes: EncodedPasses): void {
  const n = passes.count;
  if (n === 0) return;
  const ordinals = new Int32Array(passes.ordinals.buffer, passes.ordinals.byteOffset, n);
  // details: n uint32 time offsets, n int32 retry indexes, n int32 durations (-1: none).
  const details = new DataView(passes.details.buffer, passes.details.byteOffset, n * 12);
  for (let i = 0; i < n; i++) {
    const sum = runSum(sums, hourOf(passes.atMin + details.getUint32(i * 4, true)), ordinals[i] as number);
    sum[0]++;
    const ms = details.getInt32(n * 8 + i * 4, true);
    if (ms >= 0) {
      sum[4] += ms;
      sum[5]++;
    }
  }
}

export function addResults(
  sums: RunSums,
  results: readonly RollupResult[],
  ordinalOf: (id: string) => number,
): void {
  for (const r of results) {
    const sum = runSum(sums, hourOf(r.at), ordinalOf(r.test_case_id));
    if (r.outcome === 'failed') {
      sum[1]++;
      if (r.quarantined === 1) sum[2]++;
    } else if (r.outcome === 'skipped') sum[3]++;
    const ms = r.duration_ms;
    if (ms !== null && ms !== undefined) {
      sum[4] += Number(ms);
      sum[5]++;
    }
  }
}

/** The rows of `sums` (times `sign`), flat, ordered by hour and test. */
export function runRows(repoId: string, sums: RunSums, sign: 1 | -1): unknown[] {
  const rows: unknown[] = [];
  for (const hour of [...sums.keys()].sort((a, b) => a - b)) {
    const byOrdinal = sums.get(hour) as Map<number, RunSum>;
    for (const ordinal of [...byOrdinal.keys()].sort((a, b) => a - b)) {
      const [p, f, q, s, ms, n] = byOrdinal.get(ordinal) as RunSum;
      rows.push(repoId, hour, ordinal, sign * p, sign * f, sign * q, sign * s, sign * ms, sign * n);
    }
  }
  return rows;
}

/** Past this many distinct hours of passes, an upload's rows are summed by key (runRows). */
const WALKED_HOURS = 8;

/**
 * An upload's test_run_hours rows (flat, by hour and test, as runRows gives them): its passes as
 * encoded, sorted by test, walked once per hour they fall in (nearly always one) and summed per test
 * as they come, with no object per pass; its failed and skipped results (a few) merged in.
 */
export function uploadRunRows(
  repoId: string,
  passes: EncodedPasses,
  results: readonly RollupResult[],
  ordinalOf: (testId: string) => number,
): unknown[] {
  const n = passes.count;
  const ordinals = new Int32Array(passes.ordinals.buffer, passes.ordinals.byteOffset, n);
  // details: n uint32 time offsets, n int32 retry indexes, n int32 durations (-1: none).
  const details = new DataView(passes.details.buffer, passes.details.byteOffset, n * 12);
  const hours = new Int32Array(n);
  const passHours = new Set<number>();
  for (let i = 0; i < n; i++) {
    const hour = hourOf(passes.atMin + details.getUint32(i * 4, true));
    hours[i] = hour;
    if (passHours.size <= WALKED_HOURS) passHours.add(hour);
  }
  const extra: RunSums = new Map();
  addResults(extra, results, ordinalOf);
  if (passHours.size > WALKED_HOURS) {
    addPasses(extra, passes);
    return runRows(repoId, extra, 1);
  }
  const out: unknown[] = [];
  for (const hour of [...new Set([...passHours, ...extra.keys()])].sort((a, b) => a - b)) {
    const sums = extra.get(hour);
    const others = sums === undefined ? [] : [...sums.keys()].sort((a, b) => a - b);
    let r = 0;
    const othersBelow = (limit: number) => {
      for (; r < others.length && (others[r] as number) < limit; r++) {
        const ordinal = others[r] as number;
        const [p, f, q, s, ms, k] = (sums as Map<number, RunSum>).get(ordinal) as RunSum;
        out.push(repoId, hour, ordinal, p, f, q, s, ms, k);
      }
    };
    for (let i = 0; i < n; ) {
      if (hours[i] !== hour) {
        i++;
        continue;
      }
      // This test's passes are adjacent (the ordinals are sorted); those of this hour count here.
      const ordinal = ordinals[i] as number;
      let passed = 0;
      let ms = 0;
      let timed = 0;
      for (; i < n && ordinals[i] === ordinal; i++) {
        if (hours[i] !== hour) continue;
        passed++;
        const d = details.getInt32(n * 8 + i * 4, true);
        if (d >= 0) {
          ms += d;
          timed++;
        }
      }
      othersBelow(ordinal);
      let f = 0;
      let q = 0;
      let s = 0;
      if (r < others.length && others[r] === ordinal) {
        const sum = (sums as Map<number, RunSum>).get(ordinal) as RunSum;
        passed += sum[0];
        f = sum[1];
        q = sum[2];
        s = sum[3];
        ms += sum[4];
        timed += sum[5];
        r++;
      }
      out.push(repoId, hour, ordinal, passed, f, q, s, ms, timed);
    }
    othersBelow(Number.POSITIVE_INFINITY);
  }
  return out;
}
