// Durations and retried failures kept from the uploads (migrations 0028 and 0030, docs/dashboard.md
// "Durations and impact"): per test the sums of its timed attempts in the week of its latest one and
// the week before, and per repository and UTC day the test time and the failures that passed on a
// retry in the same upload. The days are written in the ingest transaction (store/uploads/rollups-write.ts);
// the means are not, nor the upload's counts in test_run_hours (migration 0035): ingest lists the
// upload in duration_means_pending and the folds add the listed uploads' attempts later, in one
// statement per week and per 1,000 hour rows for many uploads: foldPendingRuns their counts to the hour
// rows alone (every 8 uploads, and before each read of them), foldPendingUploads both (every 32, when
// the repository goes quiet, and before the slowest tests are read). Retention takes an upload back
// out of what it was added to; read by store/uploads/durations.ts and store/uploads/rollups.ts, which
// fold first.
import { PostgresAdapter, sql } from 'kysely';
import { keyChunks, type Queryable } from '../../db/bulk.ts';
import { inTransaction } from '../transaction.ts';
import { dayOf, weekOf } from './durations.ts';
import { decodeDetails, decodeOrdinals, type EncodedPasses, passRange } from './pass-codec.ts';
import { addPasses, addResults, addRunSums, type RunSums } from './rollups-run-rows.ts';
import { type Column, upsert } from './rollups-upsert.ts';
import { type StoredAttempts, storedAttemptsOf } from './upload-attempts.ts';

/** A failed or skipped attempt as the duration rows need it. */
export interface TimedResult {
  readonly test_case_id: string;
  readonly at: number;
  readonly outcome: string;
  readonly duration_ms?: number | null | undefined;
}

/** Per day: summed duration, timed attempts, retried failures, their summed duration. */
type DaySum = [number, number, number, number];

/** An upload's attempts: its passes as encoded for `upload_passes`, its failed and skipped results. */
interface Attempts {
  readonly results: readonly TimedResult[];
  readonly passes: EncodedPasses;
  readonly ordinalOf: (testId: string) => number;
}

/**
 * Adds an upload's duration sums to `into`: per week and test the summed duration and count of its
 * timed attempts, and per day the repository's totals, with the failed attempts of tests that also
 * passed in this upload (a retry within the same CI run) and their durations.
 */
type WeekSums = Map<number, Map<number, [number, number]>>;

function uploadSums(
  attempts: Attempts,
  into: { weeks?: WeekSums | undefined; days?: Map<number, DaySum> | undefined },
): void {
  const { passes, results, ordinalOf } = attempts;
  const { weeks, days } = into;
  // An upload's attempts nearly all fall on one day and week: the last ones' sums are reused.
  let lastDay = Number.NaN;
  let lastSums: DaySum | undefined;
  let lastWeek = Number.NaN;
  let lastByOrdinal: Map<number, [number, number]> | undefined;
  const add = (at: number, ordinal: number, ms: number, retried: boolean) => {
    if (days !== undefined) {
      const day = dayOf(at);
      let d = day === lastDay ? lastSums : days.get(day);
      if (d === undefined) {
        d = [0, 0, 0, 0];
        days.set(day, d);
      }
      lastDay = day;
      lastSums = d;
      if (retried) d[2]++;
      if (ms >= 0) {
        d[0] += ms;
        d[1]++;
        if (retried) d[3] += ms;
      }
    }
    if (ms < 0 || weeks === undefined) return;
    const week = weekOf(at);
    let byOrdinal = week === lastWeek ? lastByOrdinal : weeks.get(week);
    if (byOrdinal === undefined) {
      byOrdinal = new Map();
      weeks.set(week, byOrdinal);
    }
    lastWeek = week;
    lastByOrdinal = byOrdinal;
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

/** Adds per-week sums (times `sign`) to test_duration_means; taken out (-1) only from tests with a row. */
async function addWeekMeans(db: Queryable, repoId: string, weeks: WeekSums, sign: 1 | -1): Promise<void> {
  // One statement per week, oldest first: a test's row is updated once per statement. The row's
  // state (its latest week's and the week before's sums) does not depend on the order uploads come in.
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
}

/** Adds per-day sums (times `sign`) to repo_time_days. */
async function addDays(
  db: Queryable,
  repoId: string,
  days: Map<number, DaySum>,
  sign: 1 | -1,
): Promise<void> {
  const dayRows: unknown[] = [];
  for (const [day, [ms, timed, retried, retriedMs]] of [...days.entries()].sort((a, b) => a[0] - b[0]))
    dayRows.push(repoId, day, sign * ms, sign * timed, sign * retried, sign * retriedMs);
  await upsert(db, 'repo_time_days', DAY_COLUMNS, 'repo_id, day', DAY_UPDATE, dayRows);
}

/** Adds an upload's timed attempts to repo_time_days (in the ingest transaction). */
export async function addUploadDays(db: Queryable, repoId: string, attempts: Attempts): Promise<void> {
  const days = new Map<number, DaySum>();
  uploadSums(attempts, { days });
  await addDays(db, repoId, days, 1);
}

/**
 * Uploads listed with their counts not yet in test_run_hours after which ingest has those counts folded
 * (in the background once it committed: app/ingest/means-fold.ts).
 */
export const FOLD_AFTER_PENDING = 8;
/**
 * Uploads listed (counts folded or not) after which ingest has everything folded, the slowest tests'
 * means too. The means cost one upsert of a row per timed test however many uploads it adds, and
 * every row's mean moves (so does its entry in the index by mean: no HOT update), ~70 ms for 5,000
 * tests on PostgreSQL: folded 32 uploads at a time instead of 8. Only the durations page reads them,
 * and it folds first; a quiet repository's are folded a moment after its last upload (MeansFolds.idle).
 */
export const FOLD_MEANS_AFTER = 32;
/** Pending uploads folded in one transaction. */
const FOLD_BATCH = 64;

/** What a repository's listed uploads call for: nothing yet, their counts folded, or everything. */
export type FoldDue = 'none' | 'runs' | 'all';

function dueOf(listed: number, runs: number): FoldDue {
  if (listed >= FOLD_MEANS_AFTER) return 'all';
  return runs >= FOLD_AFTER_PENDING ? 'runs' : 'none';
}

/** How many uploads the repository has listed (up to FOLD_MEANS_AFTER), and how many of them with runs_pending. */
async function pendingCounts(db: Queryable, repoId: string): Promise<{ listed: number; runs: number }> {
  const { rows } = await sql<{
    listed: number | string;
    runs: number | string | null;
  }>`select count(*) as listed, sum(runs_pending) as runs
    from (select runs_pending from duration_means_pending where repo_id = ${repoId}
      limit ${FOLD_MEANS_AFTER}) p`.execute(db);
  return { listed: Number(rows[0]?.listed ?? 0), runs: Number(rows[0]?.runs ?? 0) };
}

/**
 * Lists an upload as not yet in the means nor in test_run_hours (in the ingest transaction), and
 * answers what the repository's listed uploads now call for: the caller has it folded once its
 * transaction committed. PostgreSQL: one statement (the count reads the rows listed before it, so
 * the new one is added).
 */
export async function markUploadPending(db: Queryable, repoId: string, uploadId: string): Promise<FoldDue> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const { rows } = await sql<{ listed: number | string; runs: number | string | null }>`with listed as (
        insert into duration_means_pending (repo_id, upload_id, runs_pending) values (${repoId}, ${uploadId}, 1)
        returning 1)
      select count(*) as listed, sum(runs_pending) as runs
      from (select runs_pending from duration_means_pending where repo_id = ${repoId}
        limit ${FOLD_MEANS_AFTER - 1}) p`.execute(db);
    return dueOf(Number(rows[0]?.listed ?? 0) + 1, Number(rows[0]?.runs ?? 0) + 1);
  }
  await db
    .insertInto('duration_means_pending')
    .values({ repo_id: repoId, upload_id: uploadId, runs_pending: 1 })
    .execute();
  const { listed, runs } = await pendingCounts(db, repoId);
  return dueOf(listed, runs);
}

/** Serializes the writers of a repository's means on PostgreSQL (SQLite has one writer). */
async function lockMeans(db: Queryable, repoId: string): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter)
    await sql`select pg_advisory_xact_lock(hashtextextended(${`means:${repoId}`}, 0))`.execute(db);
}

/** Up to `limit` repositories with uploads listed as pending (for the periodic fold). */
export async function reposWithPendingMeans(db: Queryable, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('duration_means_pending')
    .select('repo_id')
    .distinct()
    .orderBy('repo_id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.repo_id);
}

/**
 * Folds what the repository's listed uploads call for now (FOLD_AFTER_PENDING, FOLD_MEANS_AFTER),
 * nothing if they call for nothing (after another fold took them). Returns the uploads folded.
 */
export async function foldDue(db: Queryable, repoId: string): Promise<number> {
  const { listed, runs } = await pendingCounts(db, repoId);
  const due = dueOf(listed, runs);
  if (due === 'none') return 0;
  return foldPendingUploads(db, repoId, Number.POSITIVE_INFINITY, due);
}

/**
 * The fold of a repository gone quiet after uploads (MeansFolds.idle): everything once
 * FOLD_AFTER_PENDING uploads are listed, else the listed uploads' counts alone (what every read of the
 * hour rows would fold first), leaving them listed for the means: a repository uploading now and then
 * does not pay the means' upsert (a row per timed test) for each upload. Returns the uploads folded.
 */
export async function foldQuiet(db: Queryable, repoId: string): Promise<number> {
  const { listed, runs } = await pendingCounts(db, repoId);
  if (listed >= FOLD_AFTER_PENDING) return foldPendingUploads(db, repoId);
  return runs > 0 ? foldPendingRuns(db, repoId) : 0;
}

/**
 * Adds the counts of the repository's uploads listed with runs_pending to test_run_hours, leaving
 * them listed for the means (what every reader of the hour rows does first). One probe when none is.
 */
export function foldPendingRuns(db: Queryable, repoId: string): Promise<number> {
  return foldPendingUploads(db, repoId, Number.POSITIVE_INFINITY, 'runs');
}

/**
 * Adds the attempts of the repository's pending uploads to test_duration_means (timed ones) and, for
 * those listed with runs_pending, to test_run_hours, and takes them off the list, in one transaction
 * per FOLD_BATCH uploads (each test's row updated once per week, and once per hour, they hold),
 * until none is left or `atMost` (rounded up to a batch) are folded. Returns the uploads folded.
 * `only: 'runs'`: the counts alone, of the uploads listed with runs_pending, which stay listed (with
 * runs_pending 0) for the means. Costs one probe when none is pending.
 */
export async function foldPendingUploads(
  db: Queryable,
  repoId: string,
  atMost = Number.POSITIVE_INFINITY,
  only: 'all' | 'runs' = 'all',
): Promise<number> {
  const runsOnly = only === 'runs';
  const any = await db
    .selectFrom('duration_means_pending')
    .select('upload_id')
    .where('repo_id', '=', repoId)
    .$if(runsOnly, (q) => q.where('runs_pending', '=', 1))
    .limit(1)
    .executeTakeFirst();
  if (any === undefined) return 0;
  let folded = 0;
  for (;;) {
    const n = await inTransaction(db, async (trx) => {
      await lockMeans(trx, repoId);
      const listed = await trx
        .selectFrom('duration_means_pending')
        .select(['upload_id', 'runs_pending'])
        .where('repo_id', '=', repoId)
        .$if(runsOnly, (q) => q.where('runs_pending', '=', 1))
        .orderBy('upload_id')
        .limit(FOLD_BATCH)
        .execute();
      if (listed.length === 0) return 0;
      const ids = listed.map((r) => r.upload_id);
      const runIds = listed.filter((r) => Number(r.runs_pending) === 1).map((r) => r.upload_id);
      const withRuns = new Set(runIds);
      const stored = await storedAttemptsOf(trx, runsOnly ? runIds : ids);
      const weeks: WeekSums = new Map();
      const runs: RunSums = new Map();
      for (const id of ids) {
        const attempts = stored.get(id);
        if (attempts === undefined) continue;
        if (!runsOnly) uploadSums(attempts, { weeks });
        if (withRuns.has(id)) {
          addPasses(runs, attempts.passes);
          addResults(runs, attempts.results, attempts.ordinalOf);
        }
      }
      if (!runsOnly) await addWeekMeans(trx, repoId, weeks, 1);
      await addRunSums(trx, repoId, runs, 1);
      if (runsOnly)
        await trx
          .updateTable('duration_means_pending')
          .set({ runs_pending: 0 })
          .where('repo_id', '=', repoId)
          .where('upload_id', 'in', ids)
          .execute();
      else
        await trx
          .deleteFrom('duration_means_pending')
          .where('repo_id', '=', repoId)
          .where('upload_id', 'in', ids)
          .execute();
      return ids.length;
    });
    folded += n;
    if (n < FOLD_BATCH || folded >= atMost) return folded;
  }
}

/**
 * Takes an upload's timed attempts back out (before retention deletes it): out of repo_time_days,
 * and out of test_duration_means if they were folded in, else off the pending list (a test without
 * a row is left without one). `runsPending`: it was listed with its counts not yet in test_run_hours
 * (the caller leaves those rows alone).
 */
export async function removeUploadDurations(
  db: Queryable,
  uploadId: string,
  stored: StoredAttempts,
): Promise<{ runsPending: boolean }> {
  await lockMeans(db, stored.repoId);
  const listed = await db
    .selectFrom('duration_means_pending')
    .select('runs_pending')
    .where('repo_id', '=', stored.repoId)
    .where('upload_id', '=', uploadId)
    .executeTakeFirst();
  if (listed !== undefined)
    await db
      .deleteFrom('duration_means_pending')
      .where('repo_id', '=', stored.repoId)
      .where('upload_id', '=', uploadId)
      .execute();
  const weeks: WeekSums | undefined = listed !== undefined ? undefined : new Map();
  const days = new Map<number, DaySum>();
  uploadSums(stored, { weeks, days });
  if (weeks !== undefined) await addWeekMeans(db, stored.repoId, weeks, -1);
  await addDays(db, stored.repoId, days, -1);
  return { runsPending: listed !== undefined && Number(listed.runs_pending) === 1 };
}
