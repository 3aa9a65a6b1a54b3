import { DAY_MS, HOUR_MS } from '../../domain/health/index.ts';
import {
  type FailingEntry,
  type FailingPage,
  failingList,
  failingWindowAt,
  failingWindowsBehind,
  type FailingWindow as KeptWindow,
  latestFailuresOf,
  moveFailingWindow,
  readFailingPage,
} from '../../store/dashboard/failing.ts';
import { listRows, type TestListRow } from '../../store/dashboard/repo-days.ts';
import { inTransaction } from '../../store/transaction.ts';
import { lockRepositoryHealth } from '../../store/uploads/results.ts';
import { readVersion } from '../../store/uploads/rollups.ts';
import type { AppContext, Caller } from '../context.ts';
import { findRepository, type RepoRef, type Repository } from '../repositories.ts';
import type { KeptPage } from './failing-lists.ts';
import { PAGE_SIZE } from './tests.ts';

/** The windows the failing-tests page offers, by their query value. */
export const FAILING_WINDOWS = { '24h': 24 * HOUR_MS, '7d': 7 * DAY_MS } as const;
export type FailingWindow = keyof typeof FAILING_WINDOWS;

export interface FailingQuery {
  readonly window: FailingWindow;
  /** 1-based. */
  readonly page: number;
}

export interface FailingRow {
  readonly test: TestListRow;
  readonly failures: number;
  readonly lastAt: number | null;
  readonly summary: string;
}

export interface FailingTestsPage {
  readonly repository: Repository;
  readonly total: number;
  readonly rows: FailingRow[];
  readonly page: number;
  readonly pages: number;
}

/**
 * The tests that failed in the window (whole UTC hours, as list-failing-tests counts them), most
 * failures first, 50 a page: the order, the failures and the count from the repository's kept window
 * (store/dashboard/failing.ts, a range read), the latest failure and its summary from the failure
 * rollups, the rest from the test rows of the page; the page kept by the read version
 * (failing-lists.ts).
 */
export async function failingTestsPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  query: FailingQuery,
): Promise<FailingTestsPage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const now = ctx.now();
  const window = failingWindowAt(FAILING_WINDOWS[query.window] / HOUR_MS, now);
  const version = await readVersion(ctx.db, repository.id);
  const load = (page: number) => loadPage(ctx, repository.id, window, page);
  const key = `${repository.id}|${window.hours}|${window.lo}|${window.hi}`;
  const kept =
    version === undefined
      ? await load(query.page)
      : await ctx.caches.failingLists.page(key, version, query.page, load);
  const pages = Math.max(1, Math.ceil(kept.total / PAGE_SIZE));
  return { repository, total: kept.total, rows: [...kept.rows], page: kept.page, pages };
}

/**
 * A page of the kept window, moved onto the window's hours first when it is not on them (a read
 * racing the hourly pass at an hour's start, or of a repository whose windows that pass has not built
 * yet); undefined if another request keeps moving it elsewhere (replicas whose clocks straddle an
 * hour): the caller then groups the window's failure rollups (groupedList).
 */
async function keptPage(
  ctx: AppContext,
  repoId: string,
  window: KeptWindow,
  page: number,
  size: number,
): Promise<FailingPage | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = await readFailingPage(ctx.db, repoId, window, page, size);
    if (read !== undefined) return read;
    await moveWindow(ctx, repoId, window);
  }
  return undefined;
}

/** The window's failing tests grouped from the failure rollups, when no kept window can be read. */
function groupedList(ctx: AppContext, repoId: string, window: KeptWindow): Promise<FailingEntry[]> {
  return failingList(ctx.db, repoId, { start: window.lo * HOUR_MS, end: (window.hi + 1) * HOUR_MS });
}

/** A page of the window with its rows: from the kept window (keptPage), else grouped. */
async function loadPage(
  ctx: AppContext,
  repoId: string,
  window: KeptWindow,
  page: number,
): Promise<KeptPage<FailingRow>> {
  const read = await keptPage(ctx, repoId, window, page, PAGE_SIZE);
  if (read !== undefined) {
    return { total: read.total, page: read.page, rows: await failingRows(ctx, repoId, read.entries, window) };
  }
  const list = await groupedList(ctx, repoId, window);
  const last = Math.max(1, Math.ceil(list.length / PAGE_SIZE));
  const clamped = Math.min(Math.max(1, page), last);
  const entries = list.slice((clamped - 1) * PAGE_SIZE, clamped * PAGE_SIZE);
  return { total: list.length, page: clamped, rows: await failingRows(ctx, repoId, entries, window) };
}

/**
 * How many tests failed in the window of `hours` at `now` (the overview's "Failing in 24 h"): the kept
 * window's count, a row read (keptPage with no rows), else the grouped list's length.
 */
export async function failingCount(
  ctx: AppContext,
  repoId: string,
  hours: number,
  now: number,
): Promise<number> {
  const window = failingWindowAt(hours, now);
  const read = await keptPage(ctx, repoId, window, 1, 0);
  return read?.total ?? (await groupedList(ctx, repoId, window)).length;
}

/** Moves a repository's kept window onto its hours, under the repository's health lock. */
function moveWindow(ctx: AppContext, repoId: string, window: KeptWindow): Promise<void> {
  return inTransaction(ctx.db, async (trx) => {
    await lockRepositoryHealth(trx, repoId);
    await moveFailingWindow(trx, repoId, window);
  });
}

/**
 * Moves every kept failing-tests window not on the hours it shows at `now`, then builds those of
 * repositories that have none (kept by no upload or read since migration 0033, e.g. rollups rebuilt):
 * run at each hour's start (runner/failing-windows.ts), at startup and by the periodic pass, so that
 * a page's read finds its window on its hours. Returns how many windows it moved or built.
 */
export async function moveFailingWindows(ctx: AppContext, now: number): Promise<number> {
  const behind = await failingWindowsBehind(ctx.db, now);
  for (const { repoId, window } of behind) await moveWindow(ctx, repoId, window);
  return behind.length;
}

/** The page's rows: its tests' list rows and latest failures in the window. */
async function failingRows(
  ctx: AppContext,
  repoId: string,
  entries: readonly FailingEntry[],
  window: KeptWindow,
): Promise<FailingRow[]> {
  const tests = new Map(
    (
      await listRows(
        ctx.db,
        entries.map((e) => e.id),
      )
    ).map((t) => [t.id, t]),
  );
  const latest = await latestFailuresOf(
    ctx.db,
    repoId,
    entries.map((e) => e.ordinal),
    window.lo * HOUR_MS,
  );
  return entries.flatMap((e) => {
    const test = tests.get(e.id);
    if (test === undefined) return [];
    const last = latest.get(e.ordinal);
    return [{ test, failures: e.failures, lastAt: last?.lastAt ?? null, summary: last?.summary ?? '' }];
  });
}
