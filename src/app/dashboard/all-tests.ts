import {
  type AllTestsFilter,
  countAllTests,
  idsOfOrdinals,
  listAllTestIds,
  searchableTests,
  testVersions,
} from '../../store/dashboard/all-tests.ts';
import { listRows, type TestListRow } from '../../store/dashboard/repo-days.ts';
import type { AppContext, Caller } from '../context.ts';
import { findRepository, type RepoRef, type Repository } from '../repositories.ts';
import { searchTexts } from './test-search.ts';
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

/**
 * Every test of the repository (healthy or not), searched by name/classname/file, code owner and file;
 * by name, 50 a page. Without a code owner (the one filter on a column that changes) the list and
 * its count come from the repository's search texts kept in memory (test-search.ts), and a page's
 * rows are kept by the repository's health_version (every write to test_cases bumps it); with one,
 * or for a repository with more tests than the cache holds, all of it from the test rows.
 */
export async function allTestsPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  query: AllTestsQuery,
): Promise<AllTestsPage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const versions = query.owner === '' ? await testVersions(ctx.db, repository.id) : undefined;
  const texts =
    versions === undefined
      ? undefined
      : await ctx.caches.testSearch.at(repository.id, versions.ordinals, () =>
          searchableTests(ctx.db, repository.id),
        );
  if (versions === undefined || texts === undefined) {
    const total = await countAllTests(ctx.db, repository.id, query);
    const { page, pages, offset } = paged(total, query.page);
    const ids = await listAllTestIds(ctx.db, repository.id, query, { limit: PAGE_SIZE, offset });
    return { repository, total, rows: await listRows(ctx.db, ids), page, pages };
  }
  const key = JSON.stringify([repository.id, versions.health, query.search, query.file, query.page]);
  let kept = ctx.caches.allTestsPages.get(key);
  if (kept === undefined) {
    const matches = searchTexts(texts, query);
    const { page, pages, offset } = paged(matches.length, query.page);
    const ids = await idsOfOrdinals(ctx.db, repository.id, matches.slice(offset, offset + PAGE_SIZE));
    kept = { total: matches.length, rows: await listRows(ctx.db, ids), page, pages };
    ctx.caches.allTestsPages.set(key, kept);
  }
  return { repository, ...kept, rows: [...kept.rows] };
}

function paged(total: number, asked: number): { page: number; pages: number; offset: number } {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const page = Math.min(Math.max(1, asked), pages);
  return { page, pages, offset: (page - 1) * PAGE_SIZE };
}
