import { type AllTestsFilter, countAllTests, listAllTestIds } from '../../store/dashboard/all-tests.ts';
import { listRows, type TestListRow } from '../../store/dashboard/repo-days.ts';
import type { AppContext, Caller } from '../context.ts';
import { findRepository, type RepoRef, type Repository } from '../repositories.ts';
import { PAGE_SIZE } from './tests.ts';

export interface AllTestsQuery extends AllTestsFilter {
  /** 1-based. */
  readonly page: number;
}

export interface AllTestsPage {
  readonly repository: Repository;
  readonly total: number;
  readonly rows: TestListRow[];
  readonly page: number;
  readonly pages: number;
}

/** Every test of the repository (healthy or not), searched by name/classname/file, code owner and file; by name, 50 a page. */
export async function allTestsPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  query: AllTestsQuery,
): Promise<AllTestsPage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const total = await countAllTests(ctx.db, repository.id, query);
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const page = Math.min(Math.max(1, query.page), pages);
  const ids = await listAllTestIds(ctx.db, repository.id, query, {
    limit: PAGE_SIZE,
    offset: (page - 1) * PAGE_SIZE,
  });
  return { repository, total, rows: await listRows(ctx.db, ids), page, pages };
}
