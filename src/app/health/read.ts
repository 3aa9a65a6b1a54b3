import { AppError } from '../../domain/errors.ts';
import { DAY_MS, HOUR_MS } from '../../domain/health/index.ts';
import { healthVersion } from '../../store/tenancy/repos.ts';
import { findTestCase, type TestCaseRow } from '../../store/tests/cases.ts';
import * as lists from '../../store/tests/lists.ts';
import { findSnapshot } from '../../store/tests/snapshots.ts';
import {
  type FailureGroupRow,
  failureGroupsOf,
  hourOf,
  type RunCounts,
  readVersion,
  runCountsOf,
  testRollupsOf,
} from '../../store/uploads/rollups.ts';
import type { AppContext, Caller } from '../context.ts';
import type { PageTokens } from '../page-token.ts';
import { type PageInfo, type PageQuery, paginate } from '../paginate.ts';
import { checkOrgSlug, findRepository, type RepoRef, type Repository } from '../repositories.ts';
import { SNAPSHOT_TTL_MS, snapshotPaginate } from '../snapshot-paginate.ts';
import type { Made } from './read-answers.ts';
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

/**
 * The repository's health_version and its read version (rollups.ts readVersion), as the kept answers'
 * keys hold them: read from the database, again only once something was committed since
 * (UnchangedReads: on SQLite; on PostgreSQL every call reads, so replicas stay exact).
 */
function healthOf(ctx: AppContext, repoId: string): Promise<number> {
  return ctx.caches.unchanged.get(ctx.db, `health|${repoId}`, () => healthVersion(ctx.db, repoId));
}

function readVersionOf(ctx: AppContext, repoId: string): Promise<string | undefined> {
  return ctx.caches.unchanged.get(ctx.db, `read|${repoId}`, () => readVersion(ctx.db, repoId));
}

function rate(counts: RunCounts | undefined): number {
  return counts === undefined || counts.ran === 0 ? 0 : counts.failed / counts.ran;
}

/** The windows of a detailed record at `now`: they start at whole hours (store/uploads/rollups.ts). */
function windowsAt(now: number) {
  return {
    since: now - 7 * DAY_MS,
    recent: now - 24 * HOUR_MS,
    now,
    groupsSince: now - FAILURE_GROUP_WINDOW_MS,
  };
}

function withRollups(
  row: lists.RecordRow,
  links: RecordLinks,
  rates: { since: RunCounts; recent: RunCounts } | undefined,
  groups: readonly FailureGroupRow[],
) {
  return {
    ...unhealthyRecord(row, links),
    most_common_failures: groups.map((g) => ({
      summary: g.summary,
      occurrence_count: g.occurrences,
      last_occurrence: new Date(g.last_at).toISOString(),
    })),
    failure_rate_last_7d: rate(rates?.since),
    failure_rate_last_24h: rate(rates?.recent),
  };
}

export type DetailedRecord = ReturnType<typeof withRollups>;

/**
 * The detailed record: the unhealthy record plus failure rates and the most common failures, read
 * from the test's rollups in one statement.
 */
export async function detailedRecord(
  ctx: AppContext,
  row: lists.RecordRow,
  links: LinkBase,
  now: number = ctx.now(),
): Promise<DetailedRecord> {
  const rollups = await testRollupsOf(ctx.db, links.repository.id, row.ordinal, {
    ...windowsAt(now),
    groups: FAILURE_GROUPS_SHOWN,
  });
  return withRollups(row, recordLinks(links), rollups, rollups.groups);
}

/**
 * Detailed records of a page of tests: their rates and failure groups read from the rollups for the
 * whole page at once (store/uploads/rollups.ts; windows are whole hours, the first one holding the window's start).
 */
async function detailedRecords(
  ctx: AppContext,
  repoId: string,
  rows: readonly lists.RecordRow[],
  links: RecordLinks,
  now: number,
): Promise<DetailedRecord[]> {
  const ordinals = rows.map((r) => r.ordinal);
  const windows = windowsAt(now);
  const [counts, groups] = await Promise.all([
    runCountsOf(ctx.db, repoId, ordinals, windows),
    failureGroupsOf(ctx.db, repoId, ordinals, windows.groupsSince, FAILURE_GROUPS_SHOWN),
  ]);
  return rows.map((row) => withRollups(row, links, counts.get(row.ordinal), groups.get(row.ordinal) ?? []));
}

/**
 * A page of unhealthy tests, as a key that names the exact answer and a way to make it: the
 * repository's health_version, the page size, the link prefix and the page token (last: the only free
 * text) fix it, so the route answers a kept key after one version lookup. A made answer holding tokens
 * of a snapshot is reusable while a fresh one would give the same (while a first page may reuse the
 * snapshot); a tampered or expired token is refused by `make`, and never kept.
 */
export async function listUnhealthyTests(
  ctx: AppContext,
  caller: Caller,
  tokens: PageTokens,
  body: Scoped & { page_query: PageQuery; status: 'FLAKY' | 'BROKEN' },
) {
  const { repository, links } = await scope(ctx, caller, body);
  const now = ctx.now();
  const shared = recordLinks(links);
  const records = (rows: readonly lists.RecordRow[]) => rows.map((r) => unhealthyRecord(r, shared));
  // Read once per request: the key, snapshot reuse and the page cache all use it.
  const version = await healthOf(ctx, repository.id);
  const { page_size: size, page_token: token } = body.page_query;
  const key = `${repository.id}|${body.status}|${size}|${version}|${shared.testUrlPrefix}|${token ?? ''}`;
  const make = async () => {
    const { rows, page, at } = await snapshotPaginate(
      ctx.db,
      tokens,
      ['unhealthy', repository.id, body.status],
      body.page_query,
      {
        version: async () => version,
        count: () => lists.countByStatus(ctx.db, repository.id, body.status),
        firstPage: async (limit) =>
          records(await lists.firstByStatus(ctx.db, repository.id, body.status, limit)),
        fill: (db, id) => lists.fillByStatus(db, id, repository.id, body.status),
        page: (id, from, to) =>
          ctx.caches.unhealthyPages.page(`${id}:${from}:${to}:${shared.testUrlPrefix}`, version, async () =>
            records(await lists.snapshotTestCases(ctx.db, id, from, to)),
          ),
      },
      now,
    );
    // A copy of the page's list (the records themselves may be shared with the page cache).
    return { value: { tests: [...rows], page }, until: await reusableUntil(ctx, at.s, now) };
  };
  return { key, now, make };
}

/**
 * Until when an answer holding tokens of snapshot `id` (null: none) may be given again: as long as a
 * first page may reuse the snapshot, so its tokens then have half an hour or more left.
 */
async function reusableUntil(ctx: AppContext, id: string | null, now: number): Promise<number> {
  if (id === null) return Number.POSITIVE_INFINITY;
  const snapshot = await findSnapshot(ctx.db, id);
  return (snapshot === undefined ? now : Number(snapshot.created_at)) + SNAPSHOT_TTL_MS / 2;
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
  const version = await healthOf(ctx, repository.id);
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

/**
 * get-test-details as a key naming the exact answer and a way to make it: the key holds the
 * repository's read version (store/uploads/rollups.ts readVersion) and the hour the windows count
 * from, so the route answers a kept key without reading the test or its rollups. The test row is read
 * only to make the answer: every write to a test bumps health_version, which the read version holds,
 * and an unknown test is refused by `make` (TEST_NOT_FOUND), so it is never kept.
 */
export async function testDetails(ctx: AppContext, caller: Caller, body: Scoped & { test_id: string }) {
  const { repository, links } = await scope(ctx, caller, body);
  const now = ctx.now();
  const testId = body.test_id.toLowerCase();
  const version = await readVersionOf(ctx, repository.id);
  const prefix = recordLinks(links).testUrlPrefix;
  // As Array.join would spell it (an absent version is empty): a template makes no array.
  const key = `${repository.id}|${version ?? ''}|${hourOf(now)}|${prefix}|${testId}`;
  const make = async (): Promise<Made<{ test: DetailedRecord }>> => ({
    value: { test: await detailedRecord(ctx, await findTest(ctx, repository, testId), links, now) },
    until: Number.POSITIVE_INFINITY,
  });
  return { key, now, make };
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

/**
 * list-failing-tests as a key naming the exact answer and a way to make it: the key holds the
 * repository's read version, the hour the records' windows count from, the window, the page size and
 * the page token (last: it is the only free text), so the route answers a kept key without grouping
 * the failure rollups. A made answer holding tokens of a snapshot is reusable while a fresh one
 * would give the same (while a first page may reuse the snapshot); a tampered or expired token is
 * refused by `make`, and never kept.
 */
export async function listFailingTests(
  ctx: AppContext,
  caller: Caller,
  tokens: PageTokens,
  body: Scoped & { page_query: PageQuery; start_time: string; end_time: string },
) {
  const { start, end } = failingWindow(body.start_time, body.end_time);
  const { repository, links } = await scope(ctx, caller, body);
  const now = ctx.now();
  const version = await readVersionOf(ctx, repository.id);
  const shared = recordLinks(links);
  const { page_size: size, page_token: token } = body.page_query;
  const key = [repository.id, version, hourOf(now), shared.testUrlPrefix, start, end, size, token ?? ''].join(
    '|',
  );
  const make = async (): Promise<Made<{ tests: DetailedRecord[]; page: PageInfo }>> => {
    const { rows, page, at } = await snapshotPaginate(
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
      now,
    );
    const value = { tests: await detailedRecords(ctx, repository.id, rows, shared, now), page };
    return { value, until: await reusableUntil(ctx, at.s, now) };
  };
  return { key, now, make };
}
