// The dashboard's failing-tests page: tests that failed in a window of whole hours, kept per repository
// and window in test_failing_windows (migration 0033) so a page is a range read in the page's order
// and its count a kept number. The table holds, for the hours [lo, hi] of failing_window_state, each
// test's failures in test_failure_hours (store/uploads/rollups.ts) over those hours: ingest adds an
// upload's failures in those hours (in its transaction), retention sets the tests whose failure hours it
// recomputed, and moving the hours (the page reading at a later hour, the periodic pass) adds the hours
// that entered and subtracts the ones that left. Every write runs under the repository's health lock
// (store/uploads/results.ts lockRepositoryHealth), so they never interleave.
import { sql } from 'kysely';
import { chunked, keyChunks, type Queryable } from '../../db/bulk.ts';
import { HOUR_MS, hourOf } from '../uploads/rollups.ts';
import { type Column, upsert } from '../uploads/rollups-upsert.ts';

export interface FailingEntry {
  readonly id: string;
  readonly ordinal: number;
  readonly failures: number;
}

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
 * Adds an upload's failures (per test ordinal and hour) to the repository's kept windows whose hours
 * hold them (in the ingest transaction, under the health lock). Failures in later hours are added
 * when the window moves onto them; a repository with no window kept yet has nothing to add to.
 */
export async function addToFailingWindows(
  db: Queryable,
  repoId: string,
  failures: readonly { readonly ordinal: number; readonly hour: number; readonly failures: number }[],
): Promise<void> {
  if (failures.length === 0) return;
  const windows = await statesOf(db, repoId);
  if (windows.length === 0) return;
  await writeCounts(db, repoId, inWindows(windows, failures), 'add');
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
 * Moves the repository's kept window of `to.hours` onto `to`'s hours (keeping it first if it is not
 * yet): the failures of the hours that entered are added, those of the hours that left subtracted,
 * in one grouping of those hours' failure rollups (an hour's worth when the clock moved on by one);
 * a window with no hour in common is grouped afresh. Run under the repository's health lock.
 */
export async function moveFailingWindow(db: Queryable, repoId: string, to: FailingWindow): Promise<void> {
  const held = (await statesOf(db, repoId)).find((w) => w.hours === to.hours);
  if (held !== undefined && held.lo === to.lo && held.hi === to.hi) return;
  let from = { lo: to.lo, hi: to.lo - 1 };
  if (held === undefined) {
    await sql`insert into failing_window_state (repo_id, hours, lo, hi, tests)
      values (${repoId}, ${to.hours}, ${from.lo}, ${from.hi}, 0)`.execute(db);
  } else if (to.lo > held.hi || to.hi < held.lo) {
    await sql`delete from test_failing_windows where repo_id = ${repoId} and hours = ${to.hours}`.execute(db);
    await sql`update failing_window_state set tests = 0
      where repo_id = ${repoId} and hours = ${to.hours}`.execute(db);
  } else {
    from = held;
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

/** The repositories' kept windows not on the hours they show at `now` (for the periodic pass). */
export async function failingWindowsBehind(
  db: Queryable,
  now: number,
): Promise<{ repoId: string; window: FailingWindow }[]> {
  const { rows } = await sql<{ repo_id: string; hours: number; lo: number; hi: number }>`select repo_id,
      hours, lo, hi from failing_window_state`.execute(db);
  return rows.flatMap((r) => {
    const window = failingWindowAt(Number(r.hours), now);
    return Number(r.lo) === window.lo && Number(r.hi) === window.hi ? [] : [{ repoId: r.repo_id, window }];
  });
}

/** Forgets the repository's kept windows (its rollups were rebuilt): the next read keeps them afresh. */
export async function forgetFailingWindows(db: Queryable, repoId: string): Promise<void> {
  await sql`delete from test_failing_windows where repo_id = ${repoId}`.execute(db);
  await sql`delete from failing_window_state where repo_id = ${repoId}`.execute(db);
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
