import { isTerminal, type QueueState } from '../../domain/queue/index.ts';
import {
  archivedPrsSince,
  archivedRunsSince,
  type ChartHourRow,
  chartHours,
  type FinishedPr,
  type FinishedRun,
  type Judged,
  judgedSince,
  MAX_ROWS,
  saveChartHours,
} from '../../store/queue/charts.ts';
import type { AppContext } from '../context.ts';

export const HOUR_MS = 3_600_000;
/** Hours the queue page's charts cover, the current one included. */
export const CHART_HOURS = 24;
/**
 * An hour's figures are final once computed this long after it ended: a run created in it may fail
 * (or be judged flaky) later, within its testing timeout.
 */
const FINAL_AFTER_MS = 3 * HOUR_MS;
/** Hours not final yet are recomputed at most this often per queue. */
const RECENT_TTL_MS = 60_000;

const FLAKY_DECISIONS = new Set(['retried_flaky', 'ignored_quarantined']);

export interface QueueCharts {
  /** Start of each hour, oldest first; the last one is the current hour. */
  readonly hours: number[];
  readonly merged: number[];
  /** Time in queue (submitted to merged) of the PRs merged in each hour; null: none merged. */
  readonly p50: (number | null)[];
  readonly p95: (number | null)[];
  /** Of every PR merged in the window. */
  readonly overall: { merged: number; p50: number | null; p95: number | null };
  /** Runs that failed (not superseded) created in each hour, less those flake protection judged flaky. */
  readonly failed: number[];
  /** Failed runs flake protection judged flaky (retried, or ignored as quarantined), by judgement time. */
  readonly flaky: number[];
  /** Whether a read hit its cap (the figures are then a lower bound). */
  readonly truncated: boolean;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? null;
}

/** Pure: the figures of each hour from `first` on (`count` hours) from the PRs, runs and judgements. */
export function hourFigures(
  first: number,
  count: number,
  prs: readonly FinishedPr[],
  runs: readonly FinishedRun[],
  judged: readonly Judged[],
  computedAt: number,
): ChartHourRow[] {
  const slot = (at: number) => {
    const i = Math.floor((at - first) / HOUR_MS);
    return i >= 0 && i < count ? i : -1;
  };
  const out = Array.from({ length: count }, (_, i) => ({
    hour: first + i * HOUR_MS,
    merged: 0,
    waits: [] as number[],
    failed: 0,
    flaky: 0,
    computedAt,
  }));
  for (const pr of prs) {
    const h = pr.state === 'merged' ? out[slot(pr.stateChangedAt)] : undefined;
    if (h === undefined) continue;
    h.merged += 1;
    h.waits.push(Math.max(0, pr.stateChangedAt - pr.submittedAt));
  }
  const flakyRuns = new Set<string>();
  for (const j of judged) {
    if (!FLAKY_DECISIONS.has(j.decision)) continue;
    flakyRuns.add(j.runId);
    const h = out[slot(j.at)];
    if (h !== undefined) h.flaky += 1;
  }
  for (const run of runs) {
    if (run.status !== 'failed' || run.failureKind === 'superseded' || flakyRuns.has(run.id)) continue;
    const h = out[slot(run.createdAt)];
    if (h !== undefined) h.failed += 1;
  }
  for (const h of out) h.waits.sort((a, b) => a - b);
  return out;
}

/** Pure: the charts of the window from its hours' figures (oldest first). */
export function chartsOf(rows: readonly ChartHourRow[], truncated = false): QueueCharts {
  const all = rows.flatMap((r) => r.waits).sort((a, b) => a - b);
  return {
    hours: rows.map((r) => r.hour),
    merged: rows.map((r) => r.merged),
    p50: rows.map((r) => percentile(r.waits, 50)),
    p95: rows.map((r) => percentile(r.waits, 95)),
    overall: { merged: all.length, p50: percentile(all, 50), p95: percentile(all, 95) },
    failed: rows.map((r) => r.failed),
    flaky: rows.map((r) => r.flaky),
    truncated,
  };
}

/**
 * The queue page's charts of the last CHART_HOURS hours, hour by hour (docs/dashboard.md, "Queue charts").
 */
export async function queueCharts(
  ctx: AppContext,
  queueId: string,
  state: QueueState,
  now: number,
): Promise<QueueCharts> {
  const { rows, truncated } = await queueChartRows(ctx, queueId, state, now, CHART_HOURS);
  return chartsOf(rows, truncated);
}

/** Days the longer views of the queue charts cover, by their query value. */
export const CHART_DAY_VIEWS = { '7d': 7, '30d': 30 } as const;
export type ChartDayView = keyof typeof CHART_DAY_VIEWS;

/**
 * The queue's charts over the last `days` UTC days, day by day (the current day last, so far): the
 * same cached hours summed per day, the percentiles taken over the day's merged PRs.
 */
export async function queueDayCharts(
  ctx: AppContext,
  queueId: string,
  state: QueueState,
  now: number,
  days: number,
): Promise<QueueCharts> {
  const { rows, truncated } = await queueChartRows(ctx, queueId, state, now, hoursOfDays(now, days));
  const byDay = new Map<number, { -readonly [K in keyof ChartHourRow]: ChartHourRow[K] }>();
  for (const r of rows) {
    const day = Math.floor(r.hour / (24 * HOUR_MS)) * 24 * HOUR_MS;
    const d = byDay.get(day) ?? { hour: day, merged: 0, waits: [], failed: 0, flaky: 0, computedAt: now };
    d.merged += r.merged;
    d.waits.push(...r.waits);
    d.failed += r.failed;
    d.flaky += r.flaky;
    byDay.set(day, d);
  }
  for (const d of byDay.values()) d.waits.sort((a, b) => a - b);
  return chartsOf([...byDay.values()], truncated);
}

/** The hours from the start of the UTC day `days - 1` days ago to the current hour. */
export function hoursOfDays(now: number, days: number): number {
  return (days - 1) * 24 + (Math.floor(now / HOUR_MS) % 24) + 1;
}

/**
 * The figures of the last `count` hours (the current one last). Hours cached in queue_chart_hours
 * are used as they are when final (or recent); the others are computed in one pass from the
 * finished PRs and runs still in the live state, those archived since the earliest of them, and the
 * judgements since then, and stored.
 */
export async function queueChartRows(
  ctx: AppContext,
  queueId: string,
  state: QueueState,
  now: number,
  count: number,
): Promise<{ rows: ChartHourRow[]; truncated: boolean }> {
  const first = Math.floor(now / HOUR_MS) * HOUR_MS - (count - 1) * HOUR_MS;
  const hours = Array.from({ length: count }, (_, i) => first + i * HOUR_MS);
  const cached = new Map((await chartHours(ctx.db, queueId, first)).map((r) => [r.hour, r]));
  const fresh = (hour: number) => {
    const r = cached.get(hour);
    if (r === undefined) return false;
    return r.computedAt >= hour + HOUR_MS + FINAL_AFTER_MS || now - r.computedAt < RECENT_TTL_MS;
  };
  const stale = hours.filter((h) => !fresh(h));
  let truncated = false;
  if (stale.length > 0) {
    const since = stale[0] ?? first;
    const archivedPrs = await archivedPrsSince(ctx.db, queueId, since);
    const archivedRuns = await archivedRunsSince(ctx.db, queueId, since);
    const judged = await judgedSince(ctx.db, queueId, since);
    // An entry may be both live and archived for a moment: keep one (by submission or run id).
    const prs = new Map<string, FinishedPr>();
    for (const e of state.prs.values()) if (isTerminal(e.state)) prs.set(e.id, e);
    for (const e of archivedPrs) prs.set(e.id, e);
    const runs = new Map<string, FinishedRun>();
    for (const r of Object.values(state.runs)) {
      runs.set(r.id, {
        id: r.id,
        status: r.status,
        createdAt: r.createdAt,
        failureKind: r.failure?.kind ?? null,
      });
    }
    for (const r of archivedRuns) runs.set(r.id, r);
    truncated = [archivedPrs, archivedRuns, judged].some((rows) => rows.length >= MAX_ROWS);
    const computed = hourFigures(
      since,
      (first + count * HOUR_MS - since) / HOUR_MS,
      [...prs.values()],
      [...runs.values()],
      judged,
      now,
    ).filter((r) => stale.includes(r.hour));
    // A cut read is not kept: the next view reads again.
    if (!truncated) await saveChartHours(ctx.db, queueId, computed);
    for (const r of computed) cached.set(r.hour, r);
  }
  const rows = hours.map(
    (hour) => cached.get(hour) ?? { hour, merged: 0, waits: [], failed: 0, flaky: 0, computedAt: now },
  );
  return { rows, truncated };
}
