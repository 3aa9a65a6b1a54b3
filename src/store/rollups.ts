// Test-health rollups (migration 0018): per repository, UTC hour and test (its ordinal) the attempts
// that passed, failed and were skipped (`test_run_hours`), and per test, hour and failure fingerprint
// the failures, the latest one's time and the least summary (`test_failure_hours`). Written in the
// ingest transaction from what the upload stores (addUploadRollups), taken back out when retention
// deletes an upload (removeUploadRollups), and read by get-test-details, list-failing-tests and the
// dashboard's test page instead of the results and pass blobs. Windows are whole hours: a window
// starting inside an hour counts that whole hour (docs/design.md, "Test-health rollups").
import { CompiledQuery, PostgresAdapter, sql } from 'kysely';
import { chunked, keyChunks, type Queryable, yieldToEventLoop } from './db.ts';
import type { EncodedPasses } from './pass-codec.ts';

export const HOUR_MS = 3_600_000;

/** The hour (start / HOUR_MS) an attempt at `at` counts in. */
export const hourOf = (at: number): number => Math.floor(at / HOUR_MS);

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

type Column = readonly [name: string, pgType: string];

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

const FAILURE_COLUMNS: readonly Column[] = [
  ['repo_id', 'text'],
  ['ordinal', 'int4'],
  ['hour', 'int4'],
  ['fingerprint', 'text'],
  ['failures', 'int4'],
  ['last_at', 'int8'],
  ['summary', 'text'],
];
// The least summary is chosen by the database (its collation orders text, as min() does on reads).
const FAILURE_ADD = [
  'failures = test_failure_hours.failures + excluded.failures',
  'last_at = case when excluded.last_at > test_failure_hours.last_at then excluded.last_at else test_failure_hours.last_at end',
  'summary = case when test_failure_hours.summary is null or excluded.summary < test_failure_hours.summary then excluded.summary else test_failure_hours.summary end',
].join(', ');

const upsertTexts = new Map<string, string>();

/** Adds `sums` (times `sign`: 1 to add an upload, -1 to take it out) to a repository's test_run_hours. */
function addRunSums(db: Queryable, repoId: string, sums: RunSums, sign: 1 | -1): Promise<void> {
  return upsert(
    db,
    'test_run_hours',
    RUN_COLUMNS,
    'repo_id, hour, ordinal',
    RUN_ADD,
    runRows(repoId, sums, sign),
  );
}

/**
 * Inserts rows (`values`: row after row, each in the order of `columns`, the first the repository's
 * id, the same in every row), adding to the row of a taken key as `set` says. No key may appear twice in one call
 * (PostgreSQL refuses to update a row twice in one statement). SQLite: multi-row statements whose
 * text is reused; PostgreSQL: the repository once, the other columns as `unnest`ed arrays, the
 * numbers' as one comma-separated text each (the driver's array parameters quote and escape every
 * element in JavaScript: ~45,000 of them for a 5,000-test upload).
 */
async function upsert(
  db: Queryable,
  table: 'test_run_hours' | 'test_failure_hours',
  columns: readonly Column[],
  key: string,
  set: string,
  values: readonly unknown[],
): Promise<void> {
  const width = columns.length;
  if (values.length % width !== 0) throw new Error(`${table}: ${values.length} values for rows of ${width}`);
  const count = values.length / width;
  if (count === 0) return;
  const names = columns.map(([c]) => `"${c}"`).join(',');
  const conflict = ` on conflict (${key}) do update set ${set}`;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const numeric = (type: string) => type === 'int4' || type === 'int8';
    const args = columns
      .slice(1)
      .map(([, type], i) =>
        numeric(type) ? `string_to_array($${i + 2}, ',')::${type}[]` : `$${i + 2}::${type}[]`,
      )
      .join(',');
    const text = `insert into "${table}" (${names}) select $1::text, u.* from unnest(${args}) as u${conflict}`;
    const repoId = values[0];
    for (let start = 0; start < count; start += 10_000) {
      const end = Math.min(count, start + 10_000);
      const params: unknown[] = [repoId];
      for (let i = 1; i < width; i++) {
        const column: unknown[] = new Array(end - start);
        for (let r = start; r < end; r++) column[r - start] = values[r * width + i] ?? null;
        params.push(numeric((columns[i] as Column)[1]) ? column.join(',') : column);
      }
      for (let r = start; r < end; r++)
        if (values[r * width] !== repoId) throw new Error(`rows of ${table} for several repositories`);
      await db.executeQuery(CompiledQuery.raw(text, params));
    }
    return;
  }
  for (let start = 0; start < count; start += 1000) {
    const n = Math.min(1000, count - start);
    const cacheKey = `${table}|${n}`;
    let text = upsertTexts.get(cacheKey);
    if (text === undefined) {
      const tuple = `(${columns.map(() => '?').join(',')})`;
      text = `insert into "${table}" (${names}) values ${new Array(n).fill(tuple).join(',')}${conflict}`;
      upsertTexts.set(cacheKey, text);
    }
    await db.executeQuery(CompiledQuery.raw(text, values.slice(start * width, (start + n) * width)));
    await yieldToEventLoop();
  }
}

/**
 * Per (hour, ordinal): passed, failed, failed while quarantined, skipped, summed durations (ms) and
 * how many attempts had one.
 */
type RunSum = [number, number, number, number, number, number];
type RunSums = Map<number, Map<number, RunSum>>;

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
function addPasses(sums: RunSums, passes: EncodedPasses): void {
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

function addResults(
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
function runRows(repoId: string, sums: RunSums, sign: 1 | -1): unknown[] {
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
function uploadRunRows(
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

/**
 * Adds an upload's attempts to the rollups (in the ingest transaction): its passes as encoded for
 * `upload_passes`, its failed and skipped results as stored. `ordinalOf`: each test's ordinal.
 */
export async function addUploadRollups(
  db: Queryable,
  repoId: string,
  attempts: {
    results: readonly RollupResult[];
    passes: EncodedPasses;
    ordinalOf: (testId: string) => number;
  },
): Promise<void> {
  await upsert(
    db,
    'test_run_hours',
    RUN_COLUMNS,
    'repo_id, hour, ordinal',
    RUN_ADD,
    uploadRunRows(repoId, attempts.passes, attempts.results, attempts.ordinalOf),
  );
  // Failures by (ordinal, hour, fingerprint): counts and latest times summed here; summaries that
  // differ within one key go in later rounds (a key once per statement), so the database picks the least.
  const groups = new Map<string, { row: unknown[]; summaries: Set<string> }>();
  for (const r of attempts.results) {
    if (r.outcome !== 'failed') continue;
    const ordinal = attempts.ordinalOf(r.test_case_id);
    const hour = hourOf(r.at);
    const fingerprint = r.failure_fingerprint ?? '';
    const summary = r.failure_summary ?? null;
    const key = `${ordinal}|${hour}|${fingerprint}`;
    const group = groups.get(key);
    if (group === undefined) {
      groups.set(key, {
        row: [repoId, ordinal, hour, fingerprint, 1, r.at, summary],
        summaries: new Set(summary === null ? [] : [summary]),
      });
      continue;
    }
    group.row[4] = (group.row[4] as number) + 1;
    if (r.at > (group.row[5] as number)) group.row[5] = r.at;
    if (summary !== null) {
      if (group.row[6] === null) group.row[6] = summary;
      else if (group.row[6] !== summary) group.summaries.add(summary);
    }
  }
  const rounds: unknown[][] = [[]];
  for (const { row, summaries } of groups.values()) {
    (rounds[0] as unknown[]).push(...row);
    let k = 1;
    for (const summary of summaries) {
      if (summary === row[6]) continue;
      rounds[k] ??= [];
      (rounds[k] as unknown[]).push(row[0], row[1], row[2], row[3], 0, row[5], summary);
      k++;
    }
  }
  for (const round of rounds)
    await upsert(
      db,
      'test_failure_hours',
      FAILURE_COLUMNS,
      'repo_id, ordinal, hour, fingerprint',
      FAILURE_ADD,
      round,
    );
}

/**
 * Takes an upload's attempts back out of the rollups, before retention deletes them: its passes and
 * results are subtracted from `test_run_hours` (rows left at zero are deleted). Returns the
 * (test, hour) pairs with failures, for `refreshFailureHours` once the results are gone.
 */
export async function removeUploadRollups(
  db: Queryable,
  uploadId: string,
): Promise<{ repoId: string; failed: { testId: string; ordinal: number; hour: number }[] } | undefined> {
  const upload = await db
    .selectFrom('uploads')
    .select('repo_id')
    .where('id', '=', uploadId)
    .executeTakeFirst();
  if (upload === undefined) return undefined;
  const repoId = upload.repo_id;
  const results = await db
    .selectFrom('test_results as r')
    .innerJoin('test_cases as t', 't.id', 'r.test_case_id')
    .select([
      'r.test_case_id',
      'r.at',
      'r.outcome',
      'r.quarantined',
      'r.failure_fingerprint',
      'r.failure_summary',
      'r.duration_ms',
      't.ordinal',
    ])
    .where('r.upload_id', '=', uploadId)
    .execute();
  const ordinals = new Map(results.map((r) => [r.test_case_id, Number(r.ordinal)] as const));
  const sums: RunSums = new Map();
  const blob = await db
    .selectFrom('upload_passes')
    .select(['count', 'at_min', 'at_max', 'ordinals', 'details'])
    .where('upload_id', '=', uploadId)
    .executeTakeFirst();
  if (blob !== undefined) {
    addPasses(sums, {
      count: Number(blob.count),
      atMin: Number(blob.at_min),
      atMax: Number(blob.at_max),
      ordinals: aligned(blob.ordinals),
      details: aligned(blob.details),
    });
  }
  const stored = results.map((r) => ({ ...r, at: Number(r.at) }));
  addResults(sums, stored, (id) => ordinals.get(id) as number);
  await addRunSums(db, repoId, sums, -1);
  for (const [hour, byOrdinal] of sums) {
    for (const part of chunked([...byOrdinal.keys()])) {
      await db
        .deleteFrom('test_run_hours')
        .where('repo_id', '=', repoId)
        .where('hour', '=', hour)
        .where('ordinal', 'in', part)
        .where('passed', '=', 0)
        .where('failed', '=', 0)
        .where('skipped', '=', 0)
        .execute();
    }
  }
  const failed = new Map<string, { testId: string; ordinal: number; hour: number }>();
  for (const r of stored) {
    if (r.outcome !== 'failed') continue;
    const hour = hourOf(r.at);
    failed.set(`${r.test_case_id}|${hour}`, { testId: r.test_case_id, ordinal: Number(r.ordinal), hour });
  }
  return { repoId, failed: [...failed.values()] };
}

/** A copy of `bytes` in a buffer of its own (aligned for typed-array views). */
function aligned(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

/** `cast(<column> / HOUR_MS as integer)`: the hour of a stored time, on both engines. */
const hourSql = (column: string) => sql.raw(`cast(${column} / ${HOUR_MS} as integer)`);

/**
 * Recomputes the failure rollups of these (test, hour) pairs from the results stored now (after
 * retention deleted some): their rows are replaced by what the remaining failures give.
 */
export async function refreshFailureHours(
  db: Queryable,
  repoId: string,
  pairs: readonly { testId: string; ordinal: number; hour: number }[],
): Promise<void> {
  for (const part of chunked(pairs, 200)) {
    const wanted = new Set(part.map((p) => `${p.ordinal}|${p.hour}`));
    const lo = Math.min(...part.map((p) => p.hour));
    const hi = Math.max(...part.map((p) => p.hour));
    const ids = [...new Set(part.map((p) => p.testId))];
    const { rows } = await sql<{
      ordinal: number;
      hour: number;
      fingerprint: string;
      failures: number;
      last_at: number;
      summary: string | null;
    }>`select t.ordinal as ordinal, ${hourSql('r.at')} as hour,
        coalesce(r.failure_fingerprint, '') as fingerprint, count(*) as failures, max(r.at) as last_at,
        min(r.failure_summary) as summary
      from test_results r join test_cases t on t.id = r.test_case_id
      where r.test_case_id in (${sql.join(ids)}) and r.outcome = 'failed'
        and r.at >= ${lo * HOUR_MS} and r.at < ${(hi + 1) * HOUR_MS}
      group by t.ordinal, ${hourSql('r.at')}, coalesce(r.failure_fingerprint, '')`.execute(db);
    for (const p of part) {
      await db
        .deleteFrom('test_failure_hours')
        .where('repo_id', '=', repoId)
        .where('ordinal', '=', p.ordinal)
        .where('hour', '=', p.hour)
        .execute();
    }
    const kept = rows
      .filter((r) => wanted.has(`${Number(r.ordinal)}|${Number(r.hour)}`))
      .flatMap((r) => [
        repoId,
        Number(r.ordinal),
        Number(r.hour),
        r.fingerprint,
        Number(r.failures),
        Number(r.last_at),
        r.summary,
      ]);
    await upsert(
      db,
      'test_failure_hours',
      FAILURE_COLUMNS,
      'repo_id, ordinal, hour, fingerprint',
      FAILURE_ADD,
      kept,
    );
  }
}

/** Attempts that ran (passed or failed) and failed. */
export interface RunCounts {
  ran: number;
  failed: number;
}

/**
 * Attempts that ran and failed since `since` and since `recent` (≥ since), per test
 * ordinal, from the hours holding those times on (attempts are at most an hour ahead of an upload, so
 * up to two hours after `now`). Tests without attempts are absent.
 */
export async function runCountsOf(
  db: Queryable,
  repoId: string,
  ordinals: readonly number[],
  window: { since: number; recent: number; now: number },
): Promise<Map<number, { since: RunCounts; recent: RunCounts }>> {
  const out = new Map<number, { since: RunCounts; recent: RunCounts }>();
  if (ordinals.length === 0) return out;
  const recent = hourOf(window.recent);
  // One range of hours per test on test_run_hours_by_test (migration 0021), not a probe per (hour, test).
  for (const part of keyChunks(db, ordinals, 100)) {
    const rows = await db
      .selectFrom('test_run_hours')
      .select(['hour', 'ordinal', 'passed', 'failed'])
      .where('repo_id', '=', repoId)
      .where('ordinal', 'in', part)
      .where('hour', '>=', hourOf(window.since))
      .where('hour', '<=', hourOf(window.now + 2 * HOUR_MS))
      .execute();
    for (const r of rows) {
      const ordinal = Number(r.ordinal);
      let e = out.get(ordinal);
      if (e === undefined) {
        e = { since: { ran: 0, failed: 0 }, recent: { ran: 0, failed: 0 } };
        out.set(ordinal, e);
      }
      const ran = Number(r.passed) + Number(r.failed);
      const failed = Number(r.failed);
      e.since.ran += ran;
      e.since.failed += failed;
      if (Number(r.hour) >= recent) {
        e.recent.ran += ran;
        e.recent.failed += failed;
      }
    }
  }
  return out;
}

export interface FailureGroupRow {
  /** '' for failures without one. */
  fingerprint: string;
  summary: string;
  occurrences: number;
  last_at: number;
}

/**
 * Each test's failures from the hour holding `since` on, grouped by fingerprint, most frequent
 * first (then the most recent, then by fingerprint), at most `limit` groups per test; by ordinal.
 */
export async function failureGroupsOf(
  db: Queryable,
  repoId: string,
  ordinals: readonly number[],
  since: number,
  limit: number,
): Promise<Map<number, FailureGroupRow[]>> {
  const out = new Map<number, FailureGroupRow[]>();
  for (const part of keyChunks(db, ordinals, 400)) {
    const rows = await db
      .selectFrom('test_failure_hours')
      .select((eb) => [
        'ordinal',
        'fingerprint',
        eb.fn.min('summary').as('summary'),
        eb.fn.sum<number>('failures').as('occurrences'),
        eb.fn.max('last_at').as('last_at'),
      ])
      .where('repo_id', '=', repoId)
      .where('ordinal', 'in', part)
      .where('hour', '>=', hourOf(since))
      .groupBy(['ordinal', 'fingerprint'])
      .execute();
    for (const r of rows) {
      const group = {
        fingerprint: r.fingerprint,
        summary: r.summary ?? '',
        occurrences: Number(r.occurrences),
        last_at: Number(r.last_at),
      };
      const ordinal = Number(r.ordinal);
      const groups = out.get(ordinal);
      if (groups === undefined) out.set(ordinal, [group]);
      else groups.push(group);
    }
  }
  for (const [ordinal, groups] of out) out.set(ordinal, groups.sort(byFrequency).slice(0, limit));
  return out;
}

/** Most frequent first, then the most recent, then by fingerprint. */
function byFrequency(a: FailureGroupRow, b: FailureGroupRow): number {
  return (
    b.occurrences - a.occurrences ||
    b.last_at - a.last_at ||
    (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0)
  );
}

/** One test's attempts that ran and failed in two windows, and its most frequent failure groups. */
export interface TestRollups {
  readonly since: RunCounts;
  readonly recent: RunCounts;
  readonly groups: FailureGroupRow[];
}

/**
 * What runCountsOf and failureGroupsOf give for one test, in one statement (a range of each rollup
 * table by the test's key): get-test-details' rates and failure groups in one round trip.
 */
export async function testRollupsOf(
  db: Queryable,
  repoId: string,
  ordinal: number,
  window: { since: number; recent: number; now: number; groupsSince: number; groups: number },
): Promise<TestRollups> {
  const { rows } = await sql<{
    kind: number;
    hour: number;
    a: number;
    b: number;
    fingerprint: string;
    summary: string | null;
    last_at: number;
  }>`select 0 as kind, hour, passed as a, failed as b, '' as fingerprint, null as summary, 0 as last_at
      from test_run_hours
      where repo_id = ${repoId} and ordinal = ${ordinal}
        and hour >= ${hourOf(window.since)} and hour <= ${hourOf(window.now + 2 * HOUR_MS)}
    union all
    select 1 as kind, 0 as hour, sum(failures) as a, 0 as b, fingerprint, min(summary) as summary,
        max(last_at) as last_at
      from test_failure_hours
      where repo_id = ${repoId} and ordinal = ${ordinal} and hour >= ${hourOf(window.groupsSince)}
      group by fingerprint`.execute(db);
  const since = { ran: 0, failed: 0 };
  const recent = { ran: 0, failed: 0 };
  const groups: FailureGroupRow[] = [];
  const recentHour = hourOf(window.recent);
  for (const r of rows) {
    if (Number(r.kind) === 1) {
      groups.push({
        fingerprint: r.fingerprint,
        summary: r.summary ?? '',
        occurrences: Number(r.a),
        last_at: Number(r.last_at),
      });
      continue;
    }
    const failed = Number(r.b);
    const ran = Number(r.a) + failed;
    since.ran += ran;
    since.failed += failed;
    if (Number(r.hour) >= recentHour) {
      recent.ran += ran;
      recent.failed += failed;
    }
  }
  return { since, recent, groups: groups.sort(byFrequency).slice(0, window.groups) };
}

/**
 * A string that changes whenever a repository's rollups may have: its health_version (every ingest
 * bumps it in the transaction that adds to the rollups), and its oldest upload's time and how many
 * uploads have that time (retention takes uploads out of the rollups oldest first and bumps
 * nothing). One statement, two probes of uploads_repo_created. Undefined for an unknown repository.
 */
export async function readVersion(db: Queryable, repoId: string): Promise<string | undefined> {
  const { rows } = await sql<{ v: number; oldest: number | null; n: number }>`select
      r.health_version as v, o.oldest as oldest,
      (select count(*) from uploads u where u.repo_id = r.id and u.created_at = o.oldest) as n
    from repositories r, (select min(created_at) as oldest from uploads where repo_id = ${repoId}) o
    where r.id = ${repoId}`.execute(db);
  const row = rows[0];
  return row === undefined ? undefined : `${Number(row.v)}.${row.oldest ?? ''}.${Number(row.n)}`;
}

export interface DailyOutcomeRow {
  /** Day index from the `since` day start. */
  day: number;
  passed: number;
  /** Failures of a test that was not quarantined, and of one that was (they did not fail CI). */
  failed: number;
  quarantined: number;
  skipped: number;
}

/** One test's attempts per UTC day for `days` days from `since` (a day start), days with none absent. */
export async function dailyOutcomesOf(
  db: Queryable,
  repoId: string,
  ordinal: number,
  since: number,
  days: number,
): Promise<DailyOutcomeRow[]> {
  const byDay = new Map<number, DailyOutcomeRow>();
  const rows = await db
    .selectFrom('test_run_hours')
    .select(['hour', 'passed', 'failed', 'failed_quarantined', 'skipped'])
    .where('repo_id', '=', repoId)
    .where('ordinal', '=', ordinal)
    .where('hour', '>=', hourOf(since))
    .where('hour', '<=', hourOf(since + days * 24 * HOUR_MS - 1))
    .execute();
  for (const r of rows) {
    const d = Math.floor((Number(r.hour) * HOUR_MS - since) / (24 * HOUR_MS));
    let row = byDay.get(d);
    if (row === undefined) {
      row = { day: d, passed: 0, failed: 0, quarantined: 0, skipped: 0 };
      byDay.set(d, row);
    }
    row.passed += Number(r.passed);
    row.failed += Number(r.failed) - Number(r.failed_quarantined);
    row.quarantined += Number(r.failed_quarantined);
    row.skipped += Number(r.skipped);
  }
  return [...byDay.values()].sort((a, b) => a.day - b.day);
}

/**
 * The tests with a failure in the hours overlapping [start, end) and their failures, with their
 * names (list-failing-tests' order: most failures, then name, then id), as SQL to select from.
 */
export function failingInWindow(repoId: string, start: number, end: number) {
  return sql`select t.id as id, f.failures as failures, t.name as name
    from (
      select ordinal, sum(failures) as failures from test_failure_hours
      where repo_id = ${repoId} and hour >= ${hourOf(start)} and hour <= ${hourOf(end - 1)}
      group by ordinal
    ) f join test_cases t on t.repo_id = ${repoId} and t.ordinal = f.ordinal`;
}

/**
 * Recomputes a repository's rollups from its stored results and pass blobs (what migration 0018
 * does for every repository): for data written around ingestion, as `npm run bench`'s seed does.
 */
export async function rebuildRollups(db: Queryable, repoId: string): Promise<void> {
  await db.deleteFrom('test_run_hours').where('repo_id', '=', repoId).execute();
  await db.deleteFrom('test_failure_hours').where('repo_id', '=', repoId).execute();
  const hour = hourSql('r.at');
  await sql`insert into test_failure_hours (repo_id, ordinal, hour, fingerprint, failures, last_at, summary)
    select r.repo_id, t.ordinal, ${hour}, coalesce(r.failure_fingerprint, ''), count(*), max(r.at),
      min(r.failure_summary)
    from test_results r join test_cases t on t.id = r.test_case_id
    where r.repo_id = ${repoId} and r.outcome = 'failed'
    group by r.repo_id, t.ordinal, ${hour}, coalesce(r.failure_fingerprint, '')`.execute(db);
  await sql`insert into test_run_hours
      (repo_id, hour, ordinal, passed, failed, failed_quarantined, skipped, duration_sum_ms, duration_count)
    select r.repo_id, ${hour}, t.ordinal, 0,
      sum(case when r.outcome = 'failed' then 1 else 0 end),
      sum(case when r.outcome = 'failed' and r.quarantined = 1 then 1 else 0 end),
      sum(case when r.outcome = 'skipped' then 1 else 0 end),
      coalesce(sum(r.duration_ms), 0), count(r.duration_ms)
    from test_results r join test_cases t on t.id = r.test_case_id
    where r.repo_id = ${repoId} and r.outcome in ('failed', 'skipped')
    group by r.repo_id, ${hour}, t.ordinal`.execute(db);
  const blobs = await db.selectFrom('upload_passes').select('id').where('repo_id', '=', repoId).execute();
  let sums: RunSums = new Map();
  let keys = 0;
  const flush = async () => {
    await addRunSums(db, repoId, sums, 1);
    sums = new Map();
    keys = 0;
  };
  for (const { id } of blobs) {
    const b = await db
      .selectFrom('upload_passes')
      .select(['count', 'at_min', 'at_max', 'ordinals', 'details'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    addPasses(sums, {
      count: Number(b.count),
      atMin: Number(b.at_min),
      atMax: Number(b.at_max),
      ordinals: aligned(b.ordinals),
      details: aligned(b.details),
    });
    keys += Number(b.count);
    if (keys > 200_000) await flush();
  }
  await flush();
}
