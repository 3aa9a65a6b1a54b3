import { DAY_MS } from '../../domain/health/index.ts';
import { listQueues } from '../../store/queue/queues.ts';
import {
  dailyDurations,
  dayOf,
  type RepoTimeDay,
  repoTimeDays,
  type SlowTest,
  slowestTests,
  weekOf,
} from '../../store/uploads/durations.ts';
import type { AppContext, Caller } from '../context.ts';
import { queueStateOf } from '../queue/apply.ts';
import { findRepository, type RepoRef, type Repository } from '../repositories.ts';
import { queueDayCharts } from './queue-charts.ts';

/** Days the duration and CI-time charts cover, the current UTC day last. */
export const DURATION_DAYS = 30;
/** Slowest tests a page. */
const PAGE_SIZE = 50;

export interface DurationsQuery {
  /** 1-based. */
  readonly page: number;
}

/** One UTC day of a chart: its start (epoch ms) and figures (zero when nothing ran). */
export type TimeDay = Omit<RepoTimeDay, 'day'> & { readonly start: number };

export interface DurationsPage {
  readonly repository: Repository;
  /** The page's slowest tests, slowest first. */
  readonly slowest: SlowTest[];
  readonly page: number;
  readonly hasNext: boolean;
  /** DURATION_DAYS days, oldest first. */
  readonly days: TimeDay[];
  /** Merge-queue runs flake protection judged flaky, per day of `days`, over the repository's queues. */
  readonly flakyRuns: number[];
}

/** A repository's last `days` UTC days (the current one last), every day present, oldest first. */
export async function timeDays(ctx: AppContext, repoId: string, days: number): Promise<TimeDay[]> {
  const to = dayOf(ctx.now());
  const from = to - days + 1;
  const rows = new Map((await repoTimeDays(ctx.db, repoId, from, to)).map((r) => [r.day, r]));
  return Array.from({ length: days }, (_, i) => {
    const r = rows.get(from + i);
    return {
      start: (from + i) * DAY_MS,
      testMs: r?.testMs ?? 0,
      timed: r?.timed ?? 0,
      retriedFailures: r?.retriedFailures ?? 0,
      retriedMs: r?.retriedMs ?? 0,
    };
  });
}

/**
 * The durations page: the slowest tests by their recent mean (precomputed per test and kept in the
 * ingest transaction, store/uploads/durations.ts), 50 a page, and the repository's test time per day.
 */
export async function durationsPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  query: DurationsQuery,
): Promise<DurationsPage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const page = Math.max(1, query.page);
  const rows = await slowestTests(
    ctx.db,
    repository.id,
    weekOf(ctx.now()) - 1,
    PAGE_SIZE + 1,
    (page - 1) * PAGE_SIZE,
  );
  return {
    repository,
    slowest: rows.slice(0, PAGE_SIZE),
    page,
    hasNext: rows.length > PAGE_SIZE,
    days: await timeDays(ctx, repository.id, DURATION_DAYS),
    flakyRuns: await flakyRunsPerDay(ctx, repository.id, DURATION_DAYS),
  };
}

/** Merge-queue runs judged flaky per UTC day over the repository's queues, from the queue charts' hours. */
async function flakyRunsPerDay(ctx: AppContext, repoId: string, days: number): Promise<number[]> {
  const out = new Array<number>(days).fill(0);
  for (const q of await listQueues(ctx.db, [repoId])) {
    const charts = await queueDayCharts(ctx, q.id, await queueStateOf(ctx, q), ctx.now(), days);
    charts.flaky.forEach((n, i) => {
      out[i] = (out[i] ?? 0) + n;
    });
  }
  return out;
}

/** One test's mean duration per UTC day over DURATION_DAYS days, oldest first (null: no timed attempt). */
export async function testDurationTrend(
  ctx: AppContext,
  repoId: string,
  ordinal: number,
): Promise<{ start: number; meanMs: number | null; count: number }[]> {
  const to = dayOf(ctx.now());
  const from = to - DURATION_DAYS + 1;
  const byDay = new Map((await dailyDurations(ctx.db, repoId, ordinal, from, to)).map((d) => [d.day, d]));
  return Array.from({ length: DURATION_DAYS }, (_, i) => {
    const d = byDay.get(from + i);
    return {
      start: (from + i) * DAY_MS,
      meanMs: d === undefined || d.count === 0 ? null : d.totalMs / d.count,
      count: d?.count ?? 0,
    };
  });
}
