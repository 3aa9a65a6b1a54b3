import { DAY_MS, HOUR_MS } from '../../domain/health/index.ts';
import {
  type FailureSampleRow,
  healthCounts,
  listIds,
  listRows,
  recentFailures,
  type TestFilter,
  type TestListRow,
  type TestSort,
} from '../../store/dashboard/repo-days.ts';
import { listQueues } from '../../store/queue/queues.ts';
import { findReposByOwnerAndName } from '../../store/tenancy/repos.ts';
import { findTestCase, type TestCaseRow } from '../../store/tests/cases.ts';
import { listEvents, type TestCaseEventRow } from '../../store/tests/events.ts';
import {
  type DailyOutcomeRow,
  dailyOutcomesOf,
  failureGroupsOf,
  runCountsOf,
} from '../../store/uploads/rollups.ts';
import type { AppContext, Caller } from '../context.ts';
import { findTest } from '../health/read.ts';
import { type HealthSettings, loadHealthSettings } from '../health/settings.ts';
import { queueStateOf } from '../queue/apply.ts';
import { findRepository, type RepoRef, type Repository } from '../repositories.ts';
import { testDurationTrend } from './durations.ts';
import { type Impact, repoImpact } from './impact.ts';
import { dayStart } from './overview.ts';

export const PAGE_SIZE = 50;
/** Days of the test page's daily chart, today included. */
export const CHART_DAYS = 30;
const FAILURE_WINDOW_MS = 30 * DAY_MS;
const FAILURE_GROUPS_SHOWN = 5;
const SAMPLES_PER_GROUP = 3;
const HISTORY_SHOWN = 200;

export interface ListQuery extends TestFilter {
  readonly sort: TestSort;
  /** 1-based. */
  readonly page: number;
}

export interface UnhealthyPage {
  readonly repository: Repository;
  readonly counts: { flaky: number; broken: number; quarantined: number };
  readonly total: number;
  readonly rows: TestListRow[];
  readonly page: number;
  readonly pages: number;
  readonly queues: string[];
  /** What flaky tests cost over the last IMPACT_DAYS days. */
  readonly impact: Impact;
}

/**
 * The repository page: its unhealthy (or quarantined) tests, filtered, sorted and paged. Unfiltered,
 * the total is one of the index-only counts and only the page's ids are read; with a search or an
 * owner, the matching ids are read once (at most the repository's unhealthy tests) and counted.
 */
export async function unhealthyTestsPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  query: ListQuery,
): Promise<UnhealthyPage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const counts = await healthCounts(ctx.db, repository.id);
  const slice = (total: number) => {
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const page = Math.min(Math.max(1, query.page), pages);
    return { pages, page, offset: (page - 1) * PAGE_SIZE };
  };
  let total: number;
  let ids: string[];
  let at: ReturnType<typeof slice>;
  if (query.search === '' && query.owner === '') {
    total = query.show === 'unhealthy' ? counts.flaky + counts.broken : counts[query.show];
    at = slice(total);
    ids = await listIds(ctx.db, repository.id, query, query.sort, { limit: PAGE_SIZE, offset: at.offset });
  } else {
    const all = await listIds(ctx.db, repository.id, query, query.sort);
    total = all.length;
    at = slice(total);
    ids = all.slice(at.offset, at.offset + PAGE_SIZE);
  }
  const rows = await listRows(ctx.db, ids);
  const rowsOfQueues = await listQueues(ctx.db, [repository.id]);
  const impact = await repoImpact(
    ctx,
    repository.id,
    await Promise.all(rowsOfQueues.map(async (q) => ({ id: q.id, state: await queueStateOf(ctx, q) }))),
  );
  const queues = rowsOfQueues.map((q) => q.branch);
  return { repository, counts, total, rows, page: at.page, pages: at.pages, queues, impact };
}

export interface FailureGroup {
  readonly summary: string;
  readonly occurrences: number;
  readonly lastAt: number;
  readonly samples: FailureSampleRow[];
}

export interface TestPage {
  readonly repository: Repository;
  readonly test: TestCaseRow;
  readonly settings: HealthSettings;
  readonly failureRate24h: { ran: number; failed: number };
  readonly failureRate7d: { ran: number; failed: number };
  readonly failures: FailureGroup[];
  /** CHART_DAYS days, oldest first. */
  readonly daily: (DailyOutcomeRow & { start: number })[];
  /** Mean duration of its timed attempts per UTC day over 30 days, oldest first (null: none). */
  readonly durations: { start: number; meanMs: number | null; count: number }[];
  readonly history: TestCaseEventRow[];
}

/** Everything the test page shows; the rates and failure groups are the ones get-test-details computes. */
export async function testPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  testId: string,
): Promise<TestPage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const test = await findTest(ctx, repository, testId.toLowerCase());
  const now = ctx.now();
  // Rates and failure groups from the rollups, as get-test-details reads them (health/read.ts).
  const counts = (
    await runCountsOf(ctx.db, repository.id, [test.ordinal], {
      since: now - 7 * DAY_MS,
      recent: now - 24 * HOUR_MS,
      now,
    })
  ).get(test.ordinal);
  const failureRate24h = counts?.recent ?? { ran: 0, failed: 0 };
  const failureRate7d = counts?.since ?? { ran: 0, failed: 0 };
  const groups =
    (
      await failureGroupsOf(
        ctx.db,
        repository.id,
        [test.ordinal],
        now - FAILURE_WINDOW_MS,
        FAILURE_GROUPS_SHOWN,
      )
    ).get(test.ordinal) ?? [];
  const failures: FailureGroup[] = [];
  for (const g of groups) {
    failures.push({
      summary: g.summary,
      occurrences: g.occurrences,
      lastAt: g.last_at,
      samples: await recentFailures(
        ctx.db,
        test.id,
        g.fingerprint,
        now - FAILURE_WINDOW_MS,
        SAMPLES_PER_GROUP,
      ),
    });
  }
  const first = dayStart(now) - (CHART_DAYS - 1) * DAY_MS;
  const byDay = new Map(
    (await dailyOutcomesOf(ctx.db, repository.id, test.ordinal, first, CHART_DAYS)).map((d) => [d.day, d]),
  );
  const daily = Array.from({ length: CHART_DAYS }, (_, day) => ({
    day,
    start: first + day * DAY_MS,
    passed: 0,
    failed: 0,
    quarantined: 0,
    skipped: 0,
    ...byDay.get(day),
  }));
  return {
    repository,
    test,
    settings: await loadHealthSettings(ctx.db, repository.id),
    failureRate24h,
    failureRate7d,
    failures,
    daily,
    durations: await testDurationTrend(ctx, repository.id, test.ordinal),
    history: await listEvents(ctx.db, test.id, undefined, HISTORY_SHOWN),
  };
}

/**
 * The test a link of the analytics CLI names (`/{org}/flaky-tests/test/{id}?repo={owner}/{name}`):
 * the repository by owner and name only, so of the caller's repositories with that owner and name
 * (any host) the one holding the test. Undefined when there is none: the caller's organization only.
 */
export async function findLinkedTest(
  ctx: AppContext,
  caller: Caller,
  ownerAndName: string,
  testId: string,
): Promise<{ repository: Repository; test: TestCaseRow } | undefined> {
  const slash = ownerAndName.lastIndexOf('/');
  const owner = ownerAndName.slice(0, slash).toLowerCase();
  const name = ownerAndName.slice(slash + 1).toLowerCase();
  const id = testId.toLowerCase();
  if (slash < 1 || name === '' || !/^[0-9a-f-]{1,64}$/.test(id)) return undefined;
  for (const repository of await findReposByOwnerAndName(ctx.db, caller.orgId, {
    ownerKey: owner,
    nameKey: name,
  })) {
    const test = await findTestCase(ctx.db, repository.id, id);
    if (test !== undefined) return { repository, test };
  }
  return undefined;
}
