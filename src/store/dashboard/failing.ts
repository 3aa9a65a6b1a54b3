// The dashboard's failing-tests page: tests that failed in a window of whole hours, kept per repository
// and window in test_failing_windows (migration 0033) so a page is a range read in the page's order
// and its count a kept number. The table holds, for the hours [lo, hi] of failing_window_state, each
// test's failures in test_failure_hours (store/uploads/rollups.ts) over those hours: ingest adds an
// upload's failures in those hours (in its transaction; a new repository's first upload keeps the
// windows), retention sets the tests whose failure hours it recomputed, and moving the hours (the hourly
// and periodic passes, or a page reading at an hour they have not moved to) adds the hours that entered
// and subtracts the ones that left. Every write runs under the repository's health lock
// (store/uploads/results.ts lockRepositoryHealth), so they never interleave.
import { PostgresAdapter, sql } from 'kysely';
import { chunked, keyChunks, type Queryable } from '../../db/bulk.ts';
import { HOUR_MS, hourOf } from '../uploads/rollups.ts';
import { type Column, upsert } from '../uploads/rollups-upsert.ts';

export interface FailingEntry {
  readonly id: string;
  readonly ordinal: number;
  readonly failures: number;
}

/** The windows kept per repository, by their length in whole hours: the page's 24 hours and 7 days. */
export const KEPT_WINDOW_HOURS: readonly number[] = [24, 168];

/** A kept window: its length in whole hours and the hours [lo, hi] (hourOf) it sums. */
export interface FailingWindow {
  readonly hours: number;
  readonly lo: number;
  readonly hi: number;
}

/**
 * The hours a window of `hours` shows at `now`: those overlapping [now − hours, now + 1 h), as
 * list-failing-tests counts them (the hour holding the window's start counts whole).
 */
export function failingWindowAt(hours: number, now: number): FailingWindow {
  return { hours, lo: hourOf(now) - hours, hi: hourOf(now + HOUR_MS - 1) };
}

/**
 * Every test with a failure in the hours overlapping [start, end), in list-failing-tests' order (most
 * failures, then name, then id), with its failures in that window: the same rows as rollups.ts
 * `failingInWindow`, with the test's ordinal, in one grouping of the failure rollups. What the kept
 * table holds; read from it only when it cannot be (readFailingPage).
 */
export async function failingList(
  db: Queryable,
  repoId: string,
  window: { start: number; end: number },
): Promise<FailingEntry[]> {
  const { rows } = await sql<{ id: string; ordinal: number; failures: number }>`select t.id as id,
      t.ordinal as ordinal, f.failures as failures
    from (
      select ordinal, sum(failures) as failures from test_failure_hours
      where repo_id = ${repoId} and hour >= ${hourOf(window.start)} and hour <= ${hourOf(window.end - 1)}
      group by ordinal
    ) f join test_cases t on t.repo_id = ${repoId} and t.ordinal = f.ordinal
    order by f.failures desc, t.name, t.id`.execute(db);
  return rows.map((r) => ({ id: r.id, ordinal: Number(r.ordinal), failures: Number(r.failures) }));
}

/** A page of a kept window: how many tests it holds, the page (clamped to the last) and its entries. */
export interface FailingPage {
  readonly total: number;
  readonly page: number;
  readonly entries: FailingEntry[];
}

/**
 * Page `page` (1-based, `size` a page) of the repository's kept window, with its count, in one
 * statement (one snapshot); undefined when the table does not hold exactly the window's hours (none
 * kept yet, or kept for other hours): moveFailingWindow, then read again.
 */
export async function readFailingPage(
  db: Queryable,
  repoId: string,
  window: FailingWindow,
  page: number,
  size: number,
): Promise<FailingPage | undefined> {
  let wanted = Math.max(1, page);
  for (;;) {
    const { rows } = await sql<{
      lo: number;
      hi: number;
      tests: number;
      id: string | null;
      ordinal: number | null;
      failures: number | null;
    }>`select s.lo as lo, s.hi as hi, s.tests as tests, w.test_id as id, w.ordinal as ordinal,
        w.failures as failures
      from failing_window_state s left join (
        select test_id, ordinal, failures, name from test_failing_windows
        where repo_id = ${repoId} and hours = ${window.hours}
        order by failures desc, name, test_id limit ${size} offset ${(wanted - 1) * size}
      ) w on 1 = 1
      where s.repo_id = ${repoId} and s.hours = ${window.hours}
      order by w.failures desc, w.name, w.test_id`.execute(db);
    const first = rows[0];
    if (first === undefined || Number(first.lo) !== window.lo || Number(first.hi) !== window.hi)
      return undefined;
    const total = Number(first.tests);
    const last = Math.max(1, Math.ceil(total / size));
    if (wanted > last) {
      wanted = last;
      continue;
    }
    const entries = rows.flatMap((r) =>
      r.id === null ? [] : [{ id: r.id, ordinal: Number(r.ordinal), failures: Number(r.failures) }],
    );
    return { total, page: wanted, entries };
  }
}

/** The repository's kept windows. */
async function statesOf(db: Queryable, repoId: string): Promise<FailingWindow[]> {
  const { rows } = await sql<{ hours: number; lo: number; hi: number }>`select hours, lo, hi
    from failing_window_state where repo_id = ${repoId}`.execute(db);
  return rows.map((r) => ({ hours: Number(r.hours), lo: Number(r.lo), hi: Number(r.hi) }));
}

const WINDOW_COLUMNS: readonly Column[] = [
  ['repo_id', 'text'],
  ['hours', 'int4'],
  ['ordinal', 'int4'],
  ['failures', 'int4'],
  ['name', 'text'],
  ['test_id', 'text'],
];

/**
 * Writes per window (by its hours) and test ordinal a change of the test's failures: added to what
 * the table holds (`add`) or replacing it (`set`). Rows left without failures are deleted, and each
 * window's count follows. Reads what is held (and the tests' names) in one statement per 500 tests,
 * writes in one upsert: the health lock the caller holds keeps anyone else from writing in between.
 */
async function writeCounts(
  db: Queryable,
  repoId: string,
  counts: ReadonlyMap<number, ReadonlyMap<number, number>>,
  mode: 'add' | 'set',
): Promise<void> {
  const ordinals = [...new Set([...counts.values()].flatMap((m) => [...m.keys()]))];
  if (ordinals.length === 0) return;
  const windows = [...counts.keys()];
  const tests = new Map<number, { id: string; name: string }>();
  const held = new Map<string, number>();
  for (const part of keyChunks(db, ordinals)) {
    const { rows } = await sql<{
      ordinal: number;
      id: string;
      name: string;
      hours: number | null;
      failures: number | null;
    }>`select t.ordinal as ordinal, t.id as id, t.name as name, w.hours as hours, w.failures as failures
      from test_cases t left join test_failing_windows w on w.repo_id = t.repo_id
        and w.hours in (${sql.join(windows)}) and w.ordinal = t.ordinal
      where t.repo_id = ${repoId} and t.ordinal in (${sql.join(part)})`.execute(db);
    for (const r of rows) {
      tests.set(Number(r.ordinal), { id: r.id, name: r.name });
      if (r.hours !== null) held.set(`${Number(r.hours)}|${Number(r.ordinal)}`, Number(r.failures));
    }
  }
  const rows: unknown[] = [];
  for (const [hours, byOrdinal] of counts) {
    let change = 0;
    const gone: number[] = [];
    for (const [ordinal, n] of byOrdinal) {
      const test = tests.get(ordinal);
      if (test === undefined) continue;
      const now = held.get(`${hours}|${ordinal}`);
      const next = mode === 'add' ? (now ?? 0) + n : n;
      if (next > 0) {
        if (next !== now) rows.push(repoId, hours, ordinal, next, test.name, test.id);
        if (now === undefined) change++;
      } else if (now !== undefined) {
        gone.push(ordinal);
        change--;
      }
    }
    for (const part of chunked(gone)) {
      await sql`delete from test_failing_windows
        where repo_id = ${repoId} and hours = ${hours} and ordinal in (${sql.join(part)})`.execute(db);
    }
    if (change !== 0) {
      await sql`update failing_window_state set tests = tests + ${change}
        where repo_id = ${repoId} and hours = ${hours}`.execute(db);
    }
  }
  await upsert(
    db,
    'test_failing_windows',
    WINDOW_COLUMNS,
    'repo_id, hours, ordinal',
    'failures = excluded.failures',
    rows,
  );
}

/** Sums failures per window and ordinal, of those whose hour lies in the window's hours. */
function inWindows(
  windows: readonly FailingWindow[],
  failures: Iterable<{ readonly ordinal: number; readonly hour: number; readonly failures: number }>,
): Map<number, Map<number, number>> {
  const counts = new Map<number, Map<number, number>>();
  for (const f of failures) {
    for (const w of windows) {
      if (f.hour < w.lo || f.hour > w.hi) continue;
      let byOrdinal = counts.get(w.hours);
      if (byOrdinal === undefined) {
        byOrdinal = new Map();
        counts.set(w.hours, byOrdinal);
      }
      byOrdinal.set(f.ordinal, (byOrdinal.get(f.ordinal) ?? 0) + f.failures);
    }
  }
  return counts;
}

/**
 * Adds an upload's failures (per test ordinal, hour and failure group, as just added to the failure
 * rollups) to the repository's kept windows whose hours hold them (in the ingest transaction, under
 * the health lock). Failures in later hours are added when the window moves onto them. A repository
 * with no window kept yet gets both here when the rollups hold no failure but this upload's (a new
 * repository): otherwise its windows are grouped by the hourly pass, off the ingest transaction.
 */
export async function addToFailingWindows(
  db: Queryable,
  repoId: string,
  failures: readonly { readonly ordinal: number; readonly hour: number; readonly failures: number }[],
): Promise<void> {
  let windows = await statesOf(db, repoId);
  if (windows.length === 0) windows = await keepNewWindows(db, repoId, failures);
  if (windows.length === 0 || failures.length === 0) return;
  await writeCounts(db, repoId, inWindows(windows, failures), 'add');
}

/**
 * Keeps a repository's windows, empty, on the hours of its latest upload (this one: ingest writes its
 * row first, at the ingest's clock) when its failure rollups hold just the upload's `failures` (one
 * entry per rollup row it added to), so that adding them gives each window exactly; none otherwise.
 * Reads at most one row more than the upload has failure rows.
 */
async function keepNewWindows(
  db: Queryable,
  repoId: string,
  failures: readonly { readonly failures: number }[],
): Promise<FailingWindow[]> {
  const { rows } = await sql<{ n: number; f: number | null }>`select count(*) as n, sum(failures) as f
    from (select failures from test_failure_hours where repo_id = ${repoId}
      limit ${failures.length + 1}) held`.execute(db);
  const upload = failures.reduce((sum, f) => sum + f.failures, 0);
  if (Number(rows[0]?.n ?? 0) > failures.length || Number(rows[0]?.f ?? 0) !== upload) return [];
  const latest = await sql<{ at: number | null }>`select max(created_at) as at from uploads
    where repo_id = ${repoId}`.execute(db);
  const at = latest.rows[0]?.at;
  if (at === null || at === undefined) return [];
  const windows = KEPT_WINDOW_HOURS.map((hours) => failingWindowAt(hours, Number(at)));
  for (const w of windows) {
    await sql`insert into failing_window_state (repo_id, hours, lo, hi, tests)
      values (${repoId}, ${w.hours}, ${w.lo}, ${w.hi}, 0)`.execute(db);
  }
  return windows;
}

/**
 * After retention recomputed these (test, hour) pairs' failure rollups: each kept window holding one
 * of the hours gets its tests' failures again from the rollups over its hours.
 */
export async function refreshFailingWindows(
  db: Queryable,
  repoId: string,
  pairs: readonly { readonly ordinal: number; readonly hour: number }[],
): Promise<void> {
  if (pairs.length === 0) return;
  const windows = await statesOf(db, repoId);
  const counts = inWindows(
    windows,
    pairs.map((p) => ({ ...p, failures: 0 })),
  );
  for (const w of windows) {
    const byOrdinal = counts.get(w.hours);
    if (byOrdinal === undefined) continue;
    for (const part of keyChunks(db, [...byOrdinal.keys()])) {
      const { rows } = await sql<{
        ordinal: number;
        failures: number;
      }>`select ordinal, sum(failures) as failures
        from test_failure_hours
        where repo_id = ${repoId} and ordinal in (${sql.join(part)}) and hour >= ${w.lo} and hour <= ${w.hi}
        group by ordinal`.execute(db);
      for (const r of rows) byOrdinal.set(Number(r.ordinal), Number(r.failures));
    }
  }
  await writeCounts(db, repoId, counts, 'set');
}

/**
 * Moves the repository's kept window of `to.hours` onto `to`'s hours: the failures of the hours that
 * entered are added, those of the hours that left subtracted, in one grouping of those hours' failure
 * rollups (an hour's worth when the clock moved on by one). A window not kept yet, or with no hour in
 * common, is built afresh (buildFailingWindow). Run under the repository's health lock.
 */
export async function moveFailingWindow(db: Queryable, repoId: string, to: FailingWindow): Promise<void> {
  const from = (await statesOf(db, repoId)).find((w) => w.hours === to.hours);
  if (from !== undefined && from.lo === to.lo && from.hi === to.hi) return;
  if (from === undefined || to.lo > from.hi || to.hi < from.lo) {
    await buildFailingWindow(db, repoId, to, from !== undefined);
    return;
  }
  const inTo = sql`(hour >= ${to.lo} and hour <= ${to.hi})`;
  const inFrom = sql`(hour >= ${from.lo} and hour <= ${from.hi})`;
  const { rows } = await sql<{ ordinal: number; delta: number }>`select ordinal,
      sum(case when ${inTo} then failures else -failures end) as delta
    from test_failure_hours
    where repo_id = ${repoId} and hour >= ${Math.min(from.lo, to.lo)} and hour <= ${Math.max(from.hi, to.hi)}
      and (case when ${inTo} then 1 else 0 end) <> (case when ${inFrom} then 1 else 0 end)
    group by ordinal`.execute(db);
  const deltas = new Map<number, number>();
  for (const r of rows) if (Number(r.delta) !== 0) deltas.set(Number(r.ordinal), Number(r.delta));
  await writeCounts(db, repoId, new Map([[to.hours, deltas]]), 'add');
  await sql`update failing_window_state set lo = ${to.lo}, hi = ${to.hi}
    where repo_id = ${repoId} and hours = ${to.hours}`.execute(db);
}

/**
 * Keeps the repository's window of `to.hours` afresh on `to`'s hours: its rows from one grouping of
 * those hours' failure rollups, written by the database itself (insert … select: tens of thousands of
 * rows at the scale need not pass through JavaScript), then its count. `held`: a state row
 * exists (its rows are replaced).
 */
async function buildFailingWindow(
  db: Queryable,
  repoId: string,
  to: FailingWindow,
  held: boolean,
): Promise<void> {
  if (held) {
    await sql`delete from test_failing_windows where repo_id = ${repoId} and hours = ${to.hours}`.execute(db);
  } else {
    await sql`insert into failing_window_state (repo_id, hours, lo, hi, tests)
      values (${repoId}, ${to.hours}, ${to.lo}, ${to.hi}, 0)`.execute(db);
  }
  await sql`insert into test_failing_windows (repo_id, hours, ordinal, failures, name, test_id)
    select t.repo_id, cast(${to.hours} as integer), t.ordinal, f.failures, t.name, t.id
    from (
      select ordinal, sum(failures) as failures from test_failure_hours
      where repo_id = ${repoId} and hour >= ${to.lo} and hour <= ${to.hi}
      group by ordinal
    ) f join test_cases t on t.repo_id = ${repoId} and t.ordinal = f.ordinal
    where f.failures > 0`.execute(db);
  const { rows } = await sql<{ n: number }>`select count(*) as n from test_failing_windows
    where repo_id = ${repoId} and hours = ${to.hours}`.execute(db);
  const tests = Number(rows[0]?.n ?? 0);
  await sql`update failing_window_state set lo = ${to.lo}, hi = ${to.hi}, tests = ${tests}
    where repo_id = ${repoId} and hours = ${to.hours}`.execute(db);
  // PostgreSQL plans a page's range read from the table's statistics: until autovacuum analyses it (up
  // to a minute), a build of tens of thousands of rows leaves them saying "empty", and each page read
  // sorts the whole window instead of walking its index (21 ms against 0.2 at 65k failing tests).
  if (tests >= ANALYZE_AFTER_ROWS && db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`analyze test_failing_windows`.execute(db);
  }
}

/** Rows a build must add before PostgreSQL's statistics of the table are refreshed at once. */
const ANALYZE_AFTER_ROWS = 5_000;

/**
 * Every repository's windows that are not kept, or not on the hours they show at `now` (for the hourly
 * and periodic passes): those to move first (an hour's grouping each), then those to build.
 */
export async function failingWindowsBehind(
  db: Queryable,
  now: number,
): Promise<{ repoId: string; window: FailingWindow }[]> {
  const lengths = sql.join(
    KEPT_WINDOW_HOURS.map((hours) => sql`select ${sql.lit(hours)} as hours`),
    sql` union all `,
  );
  const { rows } = await sql<{ repo_id: string; hours: number; lo: number | null; hi: number | null }>`select
      r.id as repo_id, w.hours as hours, s.lo as lo, s.hi as hi
    from repositories r cross join (${lengths}) w
      left join failing_window_state s on s.repo_id = r.id and s.hours = w.hours`.execute(db);
  const behind = rows.flatMap((r) => {
    const window = failingWindowAt(Number(r.hours), now);
    if (r.lo !== null && Number(r.lo) === window.lo && Number(r.hi) === window.hi) return [];
    return [{ repoId: r.repo_id, window, kept: r.lo !== null }];
  });
  return [...behind.filter((b) => b.kept), ...behind.filter((b) => !b.kept)].map(({ repoId, window }) => ({
    repoId,
    window,
  }));
}

/**
 * Keeps the repository's windows afresh on the hours they show at `now` (its failure rollups were
 * rebuilt): grouped here rather than by a page's first read.
 */
export async function buildFailingWindows(db: Queryable, repoId: string, now: number): Promise<void> {
  const held = await statesOf(db, repoId);
  for (const hours of KEPT_WINDOW_HOURS) {
    const window = failingWindowAt(hours, now);
    await buildFailingWindow(
      db,
      repoId,
      window,
      held.some((w) => w.hours === hours),
    );
  }
}

export interface LatestFailure {
  /** When the latest failure in the window happened. */
  readonly lastAt: number;
  /** The summary of that failure's group (the rollup keeps one per hour and fingerprint). */
  readonly summary: string;
}

/** Per test ordinal, its latest failure from the hour holding `start` on: a few rollup rows per test. */
export async function latestFailuresOf(
  db: Queryable,
  repoId: string,
  ordinals: readonly number[],
  start: number,
): Promise<Map<number, LatestFailure>> {
  const out = new Map<number, LatestFailure>();
  for (const part of keyChunks(db, ordinals, 100)) {
    const rows = await db
      .selectFrom('test_failure_hours')
      .select(['ordinal', 'last_at', 'summary'])
      .where('repo_id', '=', repoId)
      .where('ordinal', 'in', part)
      .where('hour', '>=', hourOf(start))
      .execute();
    for (const r of rows) {
      const ordinal = Number(r.ordinal);
      const at = Number(r.last_at);
      const seen = out.get(ordinal);
      if (seen === undefined || at > seen.lastAt) out.set(ordinal, { lastAt: at, summary: r.summary ?? '' });
    }
  }
  return out;
}
