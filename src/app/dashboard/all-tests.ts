import {
  type AllTestsFilter,
  countAllTests,
  idsOfOrdinals,
  listAllTestIds,
  ownedOrdinals,
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
 * by name, 50 a page. A page is kept by the repository's health_version (every write to test_cases and
 * its owner index bumps it). A search by name or file scans the repository's search texts kept in
 * memory (test-search.ts) and, with a code owner, keeps the tests the owner has (its tests from the
 * owner index, kept beside the texts by the ordinal count and owners_version); a code owner alone is
 * the owner's range of the owner index, counted and paged in the database; a repository with more
 * tests than the cache holds is searched in the database (the owner's range joined to its rows).
 */
export async function allTestsPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  query: AllTestsQuery,
): Promise<AllTestsPage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const versions = await testVersions(ctx.db, repository.id);
  if (versions === undefined) return { repository, total: 0, rows: [], page: 1, pages: 1 };
  const key = JSON.stringify([
    repository.id,
    versions.health,
    query.search,
    query.file,
    query.owner,
    query.page,
  ]);
  let kept = ctx.caches.allTestsPages.get(key);
  if (kept === undefined) {
    const searched = query.search !== '' || query.file !== '';
    const texts =
      searched || query.owner === ''
        ? await ctx.caches.testSearch.at(repository.id, versions.ordinals, () =>
            searchableTests(ctx.db, repository.id),
          )
        : undefined;
    let ids: string[];
    let total: number;
    let at: { page: number; pages: number };
    if (texts === undefined) {
      total = await countAllTests(ctx.db, repository.id, query);
      const { offset, ...rest } = paged(total, query.page);
      at = rest;
      ids = await listAllTestIds(ctx.db, repository.id, query, { limit: PAGE_SIZE, offset });
    } else {
      let matches = searchTexts(texts, query);
      if (query.owner !== '') {
        const owned = await ctx.caches.testSearch.owned(repository.id, query.owner, versions, () =>
          ownedOrdinals(ctx.db, repository.id, query.owner),
        );
        matches = matches.filter((o) => owned[o] === 1);
      }
      total = matches.length;
      const { offset, ...rest } = paged(total, query.page);
      at = rest;
      ids = await idsOfOrdinals(ctx.db, repository.id, matches.slice(offset, offset + PAGE_SIZE));
    }
    kept = { total, rows: await listRows(ctx.db, ids), ...at };
    ctx.caches.allTestsPages.set(key, kept);
  }
  return { repository, ...kept, rows: [...kept.rows] };
}

function paged(total: number, asked: number): { page: number; pages: number; offset: number } {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const page = Math.min(Math.max(1, asked), pages);
  return { page, pages, offset: (page - 1) * PAGE_SIZE };
}
