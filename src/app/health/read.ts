import { AppError } from '../../domain/errors.ts';
import { DAY_MS, HOUR_MS } from '../../domain/health/index.ts';
import { healthVersion } from '../../store/repos.ts';
import { failureGroupsOf, type RunCounts, runCountsOf } from '../../store/rollups.ts';
import { findTestCase, type TestCaseRow } from '../../store/test-cases.ts';
import * as lists from '../../store/test-lists.ts';
import type { AppContext, Caller } from '../context.ts';
import type { PageTokens } from '../page-token.ts';
import { type PageQuery, paginate } from '../paginate.ts';
import { checkOrgSlug, findRepository, type RepoRef, type Repository } from '../repositories.ts';
import { snapshotPaginate } from '../snapshot-paginate.ts';
import { unhealthyPageCache } from './page-cache.ts';
import {
  type LinkBase,
  quarantinedRecord,
  type RecordLinks,
  recordLinks,
  unhealthyRecord,
} from './records.ts';

/** Failures older than this are not grouped into most_common_failures. */
const FAILURE_GROUP_WINDOW_MS = 30 * DAY_MS;
const FAILURE_GROUPS_SHOWN = 5;
/** list-failing-tests accepts windows of at most this length (as upstream). */
const MAX_FAILING_WINDOW_MS = 7 * DAY_MS;

interface Scoped {
  repo: RepoRef;
  org_url_slug: string;
}

async function scope(
  ctx: AppContext,
  caller: Caller,
  body: Scoped,
): Promise<{ repository: Repository; links: LinkBase }> {
  checkOrgSlug(caller, body.org_url_slug);
  const repository = await findRepository(ctx.db, caller, body.repo);
  return { repository, links: { publicUrl: ctx.config.publicUrl, orgSlug: caller.orgSlug, repository } };
}

function rate(counts: RunCounts | undefined): number {
  return counts === undefined || counts.ran === 0 ? 0 : counts.failed / counts.ran;
}

/** The detailed record: the unhealthy record plus failure rates and the most common failures (rollups). */
export async function detailedRecord(ctx: AppContext, row: lists.RecordRow, links: LinkBase) {
  const [record] = await detailedRecords(ctx, links.repository.id, [row], recordLinks(links));
  return record as NonNullable<typeof record>;
}

/**
 * Detailed records of a page of tests: their rates and failure groups read from the rollups for the
 * whole page at once (store/rollups.ts; windows are whole hours, the first one holding the window's start).
 */
async function detailedRecords(
  ctx: AppContext,
  repoId: string,
  rows: readonly lists.RecordRow[],
  links: RecordLinks,
) {
  const now = ctx.now();
  const ordinals = rows.map((r) => r.ordinal);
  const [counts, groups] = await Promise.all([
    runCountsOf(ctx.db, repoId, ordinals, { since: now - 7 * DAY_MS, recent: now - 24 * HOUR_MS, now }),
    failureGroupsOf(ctx.db, repoId, ordinals, now - FAILURE_GROUP_WINDOW_MS, FAILURE_GROUPS_SHOWN),
  ]);
  return rows.map((row) => {
    const rates = counts.get(row.ordinal);
    return {
      ...unhealthyRecord(row, links),
      most_common_failures: (groups.get(row.ordinal) ?? []).map((g) => ({
        summary: g.summary,
        occurrence_count: g.occurrences,
        last_occurrence: new Date(g.last_at).toISOString(),
      })),
      failure_rate_last_7d: rate(rates?.since),
      failure_rate_last_24h: rate(rates?.recent),
    };
  });
}

/**
 * A page of unhealthy tests, and a key that names this exact answer: the same key always comes
 * with the same answer (snapshot, position, page size, health version and link prefix fix it), so
 * the route can keep the answer's JSON instead of serializing it again.
 */
export async function listUnhealthyTests(
  ctx: AppContext,
  caller: Caller,
  tokens: PageTokens,
  body: Scoped & { page_query: PageQuery; status: 'FLAKY' | 'BROKEN' },
) {
  const { repository, links } = await scope(ctx, caller, body);
  const shared = recordLinks(links);
  const records = (rows: readonly lists.RecordRow[]) => rows.map((r) => unhealthyRecord(r, shared));
  // Read once per request: a first page checks snapshot reuse with it, and the page cache keys on it.
  let version: Promise<number> | undefined;
  const versionNow = () => {
    version ??= healthVersion(ctx.db, repository.id);
    return version;
  };
  const { rows, page, at } = await snapshotPaginate(
    ctx.db,
    tokens,
    ['unhealthy', repository.id, body.status],
    body.page_query,
    {
      version: versionNow,
      count: () => lists.countByStatus(ctx.db, repository.id, body.status),
      firstPage: async (limit) =>
        records(await lists.firstByStatus(ctx.db, repository.id, body.status, limit)),
      fill: (db, id) => lists.fillByStatus(db, id, repository.id, body.status),
      page: async (id, from, to) => {
        const key = `${id}:${from}:${to}:${shared.testUrlPrefix}`;
        return unhealthyPageCache(ctx.db).page(key, await versionNow(), async () =>
          records(await lists.snapshotTestCases(ctx.db, id, from, to)),
        );
      },
    },
    ctx.now(),
  );
  const key = [
    repository.id,
    body.status,
    body.page_query.page_size,
    await versionNow(),
    shared.testUrlPrefix,
    at.s ?? 'live',
    at.i,
  ].join('|');
  // A copy of the page's list (the records themselves may be shared with the page cache).
  return { answer: { tests: [...rows], page }, key };
}

/**
 * A page of quarantined tests, computed only when asked: the key names the exact answer (the
 * repository's health_version fixes what the list holds, the verified page token where the page
 * starts), so the route answers a kept key without reading the list. Only answered tokens are ever
 * kept: a tampered or foreign token misses and is refused by `answer`.
 */
export async function listQuarantinedTests(
  ctx: AppContext,
  caller: Caller,
  tokens: PageTokens,
  body: Scoped & { page_query: PageQuery },
) {
  const { repository } = await scope(ctx, caller, body);
  const version = await healthVersion(ctx.db, repository.id);
  const key = [repository.id, version, body.page_query.page_size, body.page_query.page_token ?? ''].join('|');
  const answer = async () => {
    const { rows, page } = await paginate<TestCaseRow, lists.NameKey>(
      tokens,
      ['quarantined', repository.id],
      body.page_query,
      {
        count: () => lists.countQuarantined(ctx.db, repository.id),
        after: (k, limit) => lists.listQuarantined(ctx.db, repository.id, { after: k }, limit),
        before: (k, limit) => lists.listQuarantined(ctx.db, repository.id, { before: k }, limit),
        keyOf: (row): lists.NameKey => ({ name: row.name, id: row.id }),
      },
    );
    return { quarantined_tests: rows.map(quarantinedRecord), page };
  };
  return { key, answer };
}

export async function findTest(
  ctx: AppContext,
  repository: Repository,
  testId: string,
): Promise<TestCaseRow> {
  const row = await findTestCase(ctx.db, repository.id, testId);
  if (row === undefined) {
    throw new AppError(
      'TEST_NOT_FOUND',
      `No test case ${testId} in repository ${repository.host}/${repository.owner}/${repository.name}`,
    );
  }
  return row;
}

export async function getTestDetails(ctx: AppContext, caller: Caller, body: Scoped & { test_id: string }) {
  const { repository, links } = await scope(ctx, caller, body);
  return {
    test: await detailedRecord(ctx, await findTest(ctx, repository, body.test_id.toLowerCase()), links),
  };
}

/** Loads rows by id and returns them in the order of the ids. */
async function inOrder(
  ids: string[],
  load: (ids: string[]) => Promise<lists.RecordRow[]>,
): Promise<lists.RecordRow[]> {
  const byId = new Map((await load(ids)).map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

function failingWindow(start: string, end: string): { start: number; end: number } {
  const s = Date.parse(start);
  const e = Date.parse(end);
  const detail = (message: string) => ({
    path: '$.end_time',
    expected: 'a time after start_time, at most 7 days later',
    message,
  });
  if (e <= s)
    throw new AppError('VALIDATION_FAILED', 'end_time must be after start_time', {
      details: [detail('end_time must be after start_time')],
    });
  if (e - s > MAX_FAILING_WINDOW_MS) {
    throw new AppError('VALIDATION_FAILED', 'The window from start_time to end_time must be at most 7 days', {
      details: [detail('end_time must be at most 7 days after start_time')],
    });
  }
  return { start: s, end: e };
}

export async function listFailingTests(
  ctx: AppContext,
  caller: Caller,
  tokens: PageTokens,
  body: Scoped & { page_query: PageQuery; start_time: string; end_time: string },
) {
  const { start, end } = failingWindow(body.start_time, body.end_time);
  const { repository, links } = await scope(ctx, caller, body);
  const { rows, page } = await snapshotPaginate(
    ctx.db,
    tokens,
    ['failing', repository.id, start, end],
    body.page_query,
    {
      version: () => healthVersion(ctx.db, repository.id),
      count: () => lists.countFailing(ctx.db, repository.id, start, end),
      firstPage: async (limit) =>
        inOrder(await lists.firstFailing(ctx.db, repository.id, start, end, limit), (ids) =>
          lists.testCasesByIds(ctx.db, ids),
        ),
      fill: (db, id) => lists.fillFailing(db, id, repository.id, start, end),
      page: (id, from, to) => lists.snapshotTestCases(ctx.db, id, from, to),
    },
    ctx.now(),
  );
  return { tests: await detailedRecords(ctx, repository.id, rows, recordLinks(links)), page };
}
