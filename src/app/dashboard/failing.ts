import { DAY_MS, HOUR_MS } from '../../domain/health/index.ts';
import { failingPage, latestFailuresOf } from '../../store/dashboard/failing.ts';
import { listRows, type TestListRow } from '../../store/dashboard/repo-days.ts';
import { countFailing } from '../../store/tests/lists.ts';
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
 * failures first, 50 a page: their failures, latest failure and its summary from the failure
 * rollups, the rest from the test rows of the page.
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
  const total = await countFailing(ctx.db, repository.id, start, end);
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const page = Math.min(Math.max(1, query.page), pages);
  const entries = await failingPage(
    ctx.db,
    repository.id,
    { start, end },
    { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
  );
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
    repository.id,
    entries.map((e) => e.ordinal),
    start,
  );
  const rows = entries.flatMap((e) => {
    const test = tests.get(e.id);
    if (test === undefined) return [];
    const last = latest.get(e.ordinal);
    return [{ test, failures: e.failures, lastAt: last?.lastAt ?? null, summary: last?.summary ?? '' }];
  });
  return { repository, total, rows, page, pages };
}
