import { listQueuedPrs, type QueueState, queueStateName } from '../../domain/queue/index.ts';
import {
  countTestCases,
  DAY_MS,
  healthCounts,
  lastUploadAt,
  type RepoDayRow,
  repoDays,
  saveRepoDays,
  transitionsSince,
  uploadsPerDay,
} from '../../store/dashboard/repo-days.ts';
import { countArchivedSince } from '../../store/queue/charts.ts';
import { listQueues } from '../../store/queue/queues.ts';
import { listRepos } from '../../store/tenancy/repos.ts';
import type { AppContext, Caller } from '../context.ts';
import { queueStateOf } from '../queue/apply.ts';
import type { Repository } from '../repositories.ts';
import { failingCount } from './failing.ts';
import { type Impact, repoImpact } from './impact.ts';
import { type DayFigures, figuresAt } from './trend.ts';

/** Days shown by the overview's trends, today included. */
export const TREND_DAYS = 14;
/** Today's figures (and the tests tracked) are recomputed at most this often per repository. */
const TODAY_TTL_MS = 60_000;
/**
 * A past day's figures are final once computed this long after the day ended: a transition can be
 * dated a little in the past (the periodic pass notices a recovery up to its interval late).
 */
const FINAL_AFTER_MS = 6 * 3_600_000;
/** Repositories shown on the overview. */
const MAX_REPOS = 200;

export interface DayPoint extends DayFigures {
  /** Start of the UTC day. */
  readonly day: number;
  readonly uploads: number;
}

export interface QueueSummary {
  readonly branch: string;
  readonly state: string;
  readonly depth: number;
  /** PRs merged in the last 24 hours. */
  readonly merged24h: number;
}

export interface RepoOverview {
  readonly repository: Repository;
  readonly tests: number | null;
  readonly now: DayFigures;
  /** Oldest first; the last one is today. */
  readonly days: DayPoint[];
  readonly lastUploadAt: number | null;
  /** Tests that failed in the last 24 hours (whole hours, as the failing-tests page counts). */
  readonly failing24h: number;
  readonly queues: QueueSummary[];
  /** What flaky tests cost over the last IMPACT_DAYS days. */
  readonly impact: Impact;
}

/**
 * PRs merged since `since`: the live state's, plus the archived ones (an entry is archived shortly
 * after it ends, so one archived since then ended about then or later).
 */
async function mergedSince(ctx: AppContext, queueId: string, state: QueueState, since: number) {
  const live = state.prs.values().filter((e) => e.state === 'merged' && e.stateChangedAt >= since);
  const ids = new Set(live.map((e) => e.id));
  return ids.size + (await countArchivedSince(ctx.db, queueId, 'merged', since));
}

export const dayStart = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * The figures of the last TREND_DAYS days of one repository. Cached rows are used as they are when
 * final (or, for today, recent); the others are derived in one pass from the counts now and the
 * transitions since the earliest missing day, then stored. See docs/dashboard.md.
 */
async function repositoryDays(
  ctx: AppContext,
  repoId: string,
  cached: readonly RepoDayRow[],
  now: number,
): Promise<{ days: DayPoint[]; tests: number | null }> {
  const today = dayStart(now);
  const days = Array.from({ length: TREND_DAYS }, (_, i) => today - (TREND_DAYS - 1 - i) * DAY_MS);
  const rows = new Map(cached.map((r) => [Number(r.day), r]));
  const fresh = (day: number) => {
    const r = rows.get(day);
    if (r === undefined) return false;
    if (Number(r.computed_at) >= day + DAY_MS + FINAL_AFTER_MS) return true;
    return day === today && now - Number(r.computed_at) < TODAY_TTL_MS;
  };
  const stale = days.filter((d) => !fresh(d));
  if (stale.length > 0) {
    const earliest = stale[0] ?? today;
    const current = await healthCounts(ctx.db, repoId);
    const tests = stale.includes(today) ? await countTestCases(ctx.db, repoId) : null;
    const transitions = await transitionsSince(ctx.db, repoId, earliest + DAY_MS);
    const uploads = await uploadsPerDay(ctx.db, repoId, earliest);
    const figures = figuresAt(
      current,
      transitions,
      stale.map((d) => Math.min(d + DAY_MS, now + 1)),
    );
    const computed = stale.map((day, i) => ({
      repo_id: repoId,
      day,
      ...(figures[i] ?? current),
      uploads: uploads.get((day - earliest) / DAY_MS) ?? 0,
      tests: day === today ? tests : (rows.get(day)?.tests ?? null),
      computed_at: now,
    }));
    await saveRepoDays(ctx.db, computed);
    for (const r of computed) rows.set(r.day, r);
  }
  const points = days.map((day) => {
    const r = rows.get(day);
    return {
      day,
      flaky: Number(r?.flaky ?? 0),
      broken: Number(r?.broken ?? 0),
      quarantined: Number(r?.quarantined ?? 0),
      uploads: Number(r?.uploads ?? 0),
    };
  });
  const tests = rows.get(today)?.tests;
  return { days: points, tests: tests === null || tests === undefined ? null : Number(tests) };
}

/** The organization's repositories with their test health now, its 14-day trend, and their merge queues. */
export async function organizationOverview(ctx: AppContext, caller: Caller): Promise<RepoOverview[]> {
  const now = ctx.now();
  const repos = await listRepos(ctx.db, caller.orgId, {}, MAX_REPOS);
  const ids = repos.map((r) => r.id);
  const cached = await repoDays(ctx.db, ids, dayStart(now) - (TREND_DAYS - 1) * DAY_MS);
  const queues = await listQueues(ctx.db, ids);
  const out: RepoOverview[] = [];
  const since = now - DAY_MS;
  for (const repository of repos) {
    const { days, tests } = await repositoryDays(
      ctx,
      repository.id,
      cached.filter((r) => r.repo_id === repository.id),
      now,
    );
    const last = days.at(-1);
    const mine = await Promise.all(
      queues
        .filter((q) => q.repo_id === repository.id)
        .map(async (q) => ({ row: q, state: await queueStateOf(ctx, q) })),
    );
    out.push({
      repository,
      tests,
      now: { flaky: last?.flaky ?? 0, broken: last?.broken ?? 0, quarantined: last?.quarantined ?? 0 },
      days,
      lastUploadAt: await lastUploadAt(ctx.db, repository.id),
      failing24h: await failingCount(ctx, repository.id, 24, now),
      queues: await Promise.all(
        mine.map(async ({ row, state }) => ({
          branch: row.branch,
          state: queueStateName(state),
          depth: listQueuedPrs(state).length,
          merged24h: await mergedSince(ctx, row.id, state, since),
        })),
      ),
      impact: await repoImpact(
        ctx,
        repository.id,
        mine.map(({ row, state }) => ({ id: row.id, state })),
      ),
    });
  }
  return out;
}
