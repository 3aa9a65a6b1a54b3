import { DAY_MS, HOUR_MS } from '../../domain/health/index.ts';
import { type FailingEntry, failingList, latestFailuresOf } from '../../store/dashboard/failing.ts';
import { listRows, type TestListRow } from '../../store/dashboard/repo-days.ts';
import { hourOf, readVersion } from '../../store/uploads/rollups.ts';
import type { AppContext, Caller } from '../context.ts';
import { findRepository, type RepoRef, type Repository } from '../repositories.ts';
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
 * failures first, 50 a page: the order and the failures from the repository's list kept by its read
 * version (failing-lists.ts), the latest failure and its summary from the failure rollups, the rest
 * from the test rows of the page, kept with the list (every test_cases write bumps the version).
 */
export async function failingTestsPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  query: FailingQuery,
): Promise<FailingTestsPage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const end = ctx.now() + HOUR_MS;
  const start = ctx.now() - FAILING_WINDOWS[query.window];
  const version = await readVersion(ctx.db, repository.id);
  const load = () => failingList(ctx.db, repository.id, { start, end });
  const key = `${repository.id}|${hourOf(start)}|${hourOf(end - 1)}`;
  const kept = version === undefined ? undefined : await ctx.caches.failingLists.at(key, version, load);
  const list = kept?.entries ?? (await load());
  const total = list.length;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const page = Math.min(Math.max(1, query.page), pages);
  const build = () =>
    failingRows(ctx, repository.id, list.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE), start);
  const rows =
    kept === undefined ? await build() : await ctx.caches.failingLists.page(key, kept, page, build);
  return { repository, total, rows: [...rows], page, pages };
}

/** The page's rows: its tests' list rows and latest failures in the window. */
async function failingRows(
  ctx: AppContext,
  repoId: string,
  entries: readonly FailingEntry[],
  start: number,
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
    start,
  );
  return entries.flatMap((e) => {
    const test = tests.get(e.id);
    if (test === undefined) return [];
    const last = latest.get(e.ordinal);
    return [{ test, failures: e.failures, lastAt: last?.lastAt ?? null, summary: last?.summary ?? '' }];
  });
}
