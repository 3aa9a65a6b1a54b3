// Durations and retried failures kept at ingest (migration 0028, docs/dashboard.md "Durations and
// impact"): per test the sums of its timed attempts in the week of its latest one and the week
// before, and per repository and UTC day the test time and the failures that passed on a retry in
// the same upload. Written in the ingest transaction by store/uploads/rollups-write.ts, taken back out by retention;
// read by store/uploads/durations.ts.
import { keyChunks, type Queryable } from '../../db/bulk.ts';
import { dayOf, weekOf } from './durations.ts';
import { decodeDetails, decodeOrdinals, type EncodedPasses, passRange } from './pass-codec.ts';
import type { Column } from './rollups-upsert.ts';

/** A failed or skipped attempt as the duration rows need it. */
export interface TimedResult {
  readonly test_case_id: string;
  readonly at: number;
  readonly outcome: string;
  readonly duration_ms?: number | null | undefined;
}

/** Per day: summed duration, timed attempts, retried failures, their summed duration. */
type DaySum = [number, number, number, number];

/**
 * An upload's duration rows: per week and test the summed duration and count of its timed attempts,
 * and per day the repository's totals, with the failed attempts of tests that also passed in this
 * upload (a retry within the same CI run) and their durations.
 */
function uploadSums(
  passes: EncodedPasses,
  results: readonly TimedResult[],
  ordinalOf: (testId: string) => number,
): { weeks: Map<number, Map<number, [number, number]>>; days: Map<number, DaySum> } {
  const weeks = new Map<number, Map<number, [number, number]>>();
  const days = new Map<number, DaySum>();
  const add = (at: number, ordinal: number, ms: number, retried: boolean) => {
    const day = dayOf(at);
    let d = days.get(day);
    if (d === undefined) {
      d = [0, 0, 0, 0];
      days.set(day, d);
    }
    if (retried) d[2]++;
    if (ms < 0) return;
    d[0] += ms;
    d[1]++;
    if (retried) d[3] += ms;
    const week = weekOf(at);
    let byOrdinal = weeks.get(week);
    if (byOrdinal === undefined) {
      byOrdinal = new Map();
      weeks.set(week, byOrdinal);
    }
    const w = byOrdinal.get(ordinal);
    if (w === undefined) byOrdinal.set(ordinal, [ms, 1]);
    else {
      w[0] += ms;
      w[1]++;
    }
  };
  const passed = decodeOrdinals(passes.ordinals, passes.atMin, passes.atMax).ordinals.subarray(
    0,
    passes.count,
  );
  if (passes.count > 0) {
    const details = decodeDetails(passes.details, passes.count);
    for (let i = 0; i < passes.count; i++)
      add(
        passes.atMin + (details.atOffsets[i] as number),
        passed[i] as number,
        details.durations[i] as number,
        false,
      );
  }
  for (const r of results) {
    const ordinal = ordinalOf(r.test_case_id);
    const [from, to] = passRange(passed, ordinal);
    const retried = r.outcome === 'failed' && to > from;
    const ms = r.duration_ms === null || r.duration_ms === undefined ? -1 : Number(r.duration_ms);
    add(Number(r.at), ordinal, ms, retried);
  }
  return { weeks, days };
}

// The row a week's sums meet (o: as stored, e: this upload's): a later week rolls the current week
// into the previous one (or drops both when a week was skipped); the week before adds to `prev`; an
// older week is outside the mean and changes nothing.
const o = (c: string) => `test_duration_means.${c}`;
const e = (c: string) => `excluded.${c}`;
const byWeek = (same: string, next: string, later: string, before: string, older: string) =>
  `case when ${e('week')} = ${o('week')} then ${same} when ${e('week')} = ${o('week')} + 1 then ${next}` +
  ` when ${e('week')} > ${o('week')} + 1 then ${later} when ${e('week')} = ${o('week')} - 1 then ${before}` +
  ` else ${older} end`;
const totalOf = (c: 'sum_ms' | 'count') =>
  byWeek(
    `${o(`cur_${c}`)} + ${o(`prev_${c}`)} + ${e(`cur_${c}`)}`,
    `${e(`cur_${c}`)} + ${o(`cur_${c}`)}`,
    e(`cur_${c}`),
    `${o(`cur_${c}`)} + ${o(`prev_${c}`)} + ${e(`cur_${c}`)}`,
    `${o(`cur_${c}`)} + ${o(`prev_${c}`)}`,
  );
const MEAN_SET = {
  week: `case when ${e('week')} > ${o('week')} then ${e('week')} else ${o('week')} end`,
  cur_sum_ms: byWeek(
    `${o('cur_sum_ms')} + ${e('cur_sum_ms')}`,
    e('cur_sum_ms'),
    e('cur_sum_ms'),
    o('cur_sum_ms'),
    o('cur_sum_ms'),
  ),
  cur_count: byWeek(
    `${o('cur_count')} + ${e('cur_count')}`,
    e('cur_count'),
    e('cur_count'),
    o('cur_count'),
    o('cur_count'),
  ),
  prev_sum_ms: byWeek(
    o('prev_sum_ms'),
    o('cur_sum_ms'),
    '0',
    `${o('prev_sum_ms')} + ${e('cur_sum_ms')}`,
    o('prev_sum_ms'),
  ),
  prev_count: byWeek(
    o('prev_count'),
    o('cur_count'),
    '0',
    `${o('prev_count')} + ${e('cur_count')}`,
    o('prev_count'),
  ),
  mean_ms: `(${totalOf('sum_ms')}) * 1.0 / nullif(${totalOf('count')}, 0)`,
};

const MEAN_COLUMNS: readonly Column[] = [
  ['repo_id', 'text'],
  ['ordinal', 'int4'],
  ['week', 'int4'],
  ['cur_sum_ms', 'int8'],
  ['cur_count', 'int4'],
  ['prev_sum_ms', 'int8'],
  ['prev_count', 'int4'],
  ['mean_ms', 'float8'],
];
const MEAN_UPDATE = Object.entries(MEAN_SET)
  .map(([c, v]) => `"${c}" = ${v}`)
  .join(', ');
const DAY_COLUMNS: readonly Column[] = [
  ['repo_id', 'text'],
  ['day', 'int4'],
  ['test_ms', 'int8'],
  ['timed', 'int4'],
  ['retried_failures', 'int4'],
  ['retried_ms', 'int8'],
];
const DAY_UPDATE = ['test_ms', 'timed', 'retried_failures', 'retried_ms']
  .map((c) => `"${c}" = repo_time_days."${c}" + excluded."${c}"`)
  .join(', ');

/** The rollups' bulk upsert (store/uploads/rollups-upsert.ts): rows flat in the order of `columns`, `set` on a taken key. */
export type Upsert = (
  db: Queryable,
  table: 'test_duration_means' | 'repo_time_days',
  columns: readonly Column[],
  key: string,
  set: string,
  values: readonly unknown[],
) => Promise<void>;

/**
 * Adds an upload's timed attempts to test_duration_means and repo_time_days (`sign` 1, in the ingest
 * transaction), or takes them back out (`sign` -1, before retention deletes the upload; a test
 * without a row is left without one). Written with the rollups' own bulk upsert.
 */
export async function addUploadDurations(
  db: Queryable,
  repoId: string,
  attempts: {
    results: readonly TimedResult[];
    passes: EncodedPasses;
    ordinalOf: (testId: string) => number;
  },
  sign: 1 | -1,
  upsert: Upsert,
): Promise<void> {
  const { weeks, days } = uploadSums(attempts.passes, attempts.results, attempts.ordinalOf);
  // One statement per week, oldest first: a test's row is updated once per statement.
  for (const week of [...weeks.keys()].sort((a, b) => a - b)) {
    const byOrdinal = weeks.get(week) as Map<number, [number, number]>;
    let ordinals = [...byOrdinal.keys()].sort((a, b) => a - b);
    if (sign === -1) {
      const kept = new Set<number>();
      for (const part of keyChunks(db, ordinals, 500)) {
        const rows = await db
          .selectFrom('test_duration_means')
          .select('ordinal')
          .where('repo_id', '=', repoId)
          .where('ordinal', 'in', part)
          .execute();
        for (const r of rows) kept.add(Number(r.ordinal));
      }
      ordinals = ordinals.filter((n) => kept.has(n));
    }
    const rows: unknown[] = [];
    for (const ordinal of ordinals) {
      const [ms, count] = byOrdinal.get(ordinal) as [number, number];
      // A taken-out row is never inserted (only tests with a row are listed), so its mean is unused.
      rows.push(repoId, ordinal, week, sign * ms, sign * count, 0, 0, sign === 1 ? ms / count : 0);
    }
    await upsert(db, 'test_duration_means', MEAN_COLUMNS, 'repo_id, ordinal', MEAN_UPDATE, rows);
  }
  const dayRows: unknown[] = [];
  for (const [day, [ms, timed, retried, retriedMs]] of [...days.entries()].sort((a, b) => a[0] - b[0]))
    dayRows.push(repoId, day, sign * ms, sign * timed, sign * retried, sign * retriedMs);
  await upsert(db, 'repo_time_days', DAY_COLUMNS, 'repo_id, day', DAY_UPDATE, dayRows);
}
