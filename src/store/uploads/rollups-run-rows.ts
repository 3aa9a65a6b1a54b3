// test_run_hours rows from attempts: per (hour, test) the passes of encoded pass lists and uploads'
// failed and skipped results, summed in memory and upserted in one statement per 1,000 rows (SQLite) or
// 10,000 (PostgreSQL), by the fold of pending uploads (store/uploads/duration-writes.ts) and retention
// and rebuilds (store/uploads/rollups-write.ts).
import type { Queryable } from '../../db/bulk.ts';
import type { EncodedPasses } from './pass-codec.ts';
import { hourOf } from './rollups.ts';
import { type Column, upsert } from './rollups-upsert.ts';

const RUN_COLUMNS: readonly Column[] = [
  ['repo_id', 'text'],
  ['hour', 'int4'],
  ['ordinal', 'int4'],
  ['passed', 'int4'],
  ['failed', 'int4'],
  ['failed_quarantined', 'int4'],
  ['skipped', 'int4'],
  ['duration_sum_ms', 'int8'],
  ['duration_count', 'int4'],
];
const RUN_ADD = ['passed', 'failed', 'failed_quarantined', 'skipped', 'duration_sum_ms', 'duration_count']
  .map((c) => `"${c}" = test_run_hours."${c}" + excluded."${c}"`)
  .join(', ');

/** Adds flat test_run_hours rows (RUN_COLUMNS in order) to the ones stored for their key. */
export function addRunRows(db: Queryable, values: readonly unknown[]): Promise<void> {
  return upsert(db, 'test_run_hours', RUN_COLUMNS, 'repo_id, hour, ordinal', RUN_ADD, values);
}

/** Adds `sums` (times `sign`: 1 to add uploads, -1 to take one out) to a repository's test_run_hours. */
export function addRunSums(db: Queryable, repoId: string, sums: RunSums, sign: 1 | -1): Promise<void> {
  return addRunRows(db, runRows(repoId, sums, sign));
}

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
