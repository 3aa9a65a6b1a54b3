import { sql } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';

/**
 * The queue page's charts come from what the queue engine already keeps: finished PRs and runs moved
 * to `queue_archive` (by its index (queue_id, kind, archived_at)) and the flake-protection judgements
 * (by `run_judgements_by_time` (queue_id, at), migration 0027), each read as one range of one index
 * over the hours to compute, capped at MAX_ROWS rows; the hours computed are kept in
 * `queue_chart_hours` (migration 0027) so a page view reads those instead.
 */

/** Rows read per chart at most: the chart says when it was cut. */
export const MAX_ROWS = 5_000;

export interface FinishedPr {
  /** Submission id. */
  readonly id: string;
  readonly state: string;
  readonly submittedAt: number;
  readonly stateChangedAt: number;
}

export interface FinishedRun {
  readonly id: string;
  readonly status: string;
  readonly createdAt: number;
  readonly failureKind: string | null;
}

export interface Judged {
  readonly runId: string;
  readonly decision: string;
  readonly at: number;
}

/** The newest MAX_ROWS archived entries of a kind since `since`, each as its JSON. */
function archivedSince(db: Queryable, queueId: string, kind: 'pr' | 'run', since: number) {
  return db
    .selectFrom('queue_archive')
    .select('data')
    .where('queue_id', '=', queueId)
    .where('kind', '=', kind)
    .where('archived_at', '>=', since)
    .orderBy('archived_at', 'desc')
    .limit(MAX_ROWS)
    .execute();
}

/**
 * PR submissions archived since `since` (an entry is archived after it finished, so this holds every
 * one that finished since then and was taken out of the live state).
 */
export async function archivedPrsSince(db: Queryable, queueId: string, since: number): Promise<FinishedPr[]> {
  const rows = await archivedSince(db, queueId, 'pr', since);
  return rows.map((r) => {
    const e = JSON.parse(r.data) as FinishedPr;
    return { id: e.id, state: e.state, submittedAt: e.submittedAt, stateChangedAt: e.stateChangedAt };
  });
}

/** Test runs archived since `since` (every run created since then that left the live state). */
export async function archivedRunsSince(
  db: Queryable,
  queueId: string,
  since: number,
): Promise<FinishedRun[]> {
  const rows = await archivedSince(db, queueId, 'run', since);
  return rows.map((r) => {
    const run = JSON.parse(r.data) as {
      id: string;
      status: string;
      createdAt: number;
      failure: { kind: string } | null;
    };
    return {
      id: run.id,
      status: run.status,
      createdAt: run.createdAt,
      failureKind: run.failure?.kind ?? null,
    };
  });
}

/** The queue's flake-protection judgements made since `since`. */
export async function judgedSince(db: Queryable, queueId: string, since: number): Promise<Judged[]> {
  const rows = await db
    .selectFrom('run_judgements')
    .select(['run_id', 'decision', 'at'])
    .where('queue_id', '=', queueId)
    .where('at', '>=', since)
    .orderBy('at', 'desc')
    .limit(MAX_ROWS)
    .execute();
  return rows.map((r) => ({ runId: r.run_id, decision: r.decision, at: Number(r.at) }));
}

/**
 * PR submissions archived since `since` that ended in `state` (the overview's merged in 24 h): a
 * count over the same index range as archivedPrsSince.
 */
export async function countArchivedSince(
  db: Queryable,
  queueId: string,
  state: string,
  since: number,
): Promise<number> {
  const row = await db
    .selectFrom('queue_archive')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('queue_id', '=', queueId)
    .where('kind', '=', 'pr')
    .where('archived_at', '>=', since)
    .where('state', '=', state)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One cached hour of a queue's charts (queue_chart_hours, migration 0027). */
export interface ChartHourRow {
  readonly hour: number;
  readonly merged: number;
  /** Times in queue of the PRs merged that hour, ms, ascending. */
  readonly waits: number[];
  readonly failed: number;
  readonly flaky: number;
  readonly computedAt: number;
}

/** The cached hours of a queue from `fromHour` on (a primary-key range). */
export async function chartHours(db: Queryable, queueId: string, fromHour: number): Promise<ChartHourRow[]> {
  const { rows } = await sql<{
    hour: number;
    merged: number;
    waits: string;
    failed: number;
    flaky: number;
    computed_at: number;
  }>`select hour, merged, waits, failed, flaky, computed_at from queue_chart_hours
    where queue_id = ${queueId} and hour >= ${fromHour}`.execute(db);
  return rows.map((r) => ({
    hour: Number(r.hour),
    merged: Number(r.merged),
    waits: JSON.parse(r.waits) as number[],
    failed: Number(r.failed),
    flaky: Number(r.flaky),
    computedAt: Number(r.computed_at),
  }));
}

export async function saveChartHours(
  db: Queryable,
  queueId: string,
  rows: readonly ChartHourRow[],
): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map(
    (r) =>
      sql`(${queueId}, ${r.hour}, ${r.merged}, ${JSON.stringify(r.waits)}, ${r.failed}, ${r.flaky}, ${r.computedAt})`,
  );
  await sql`insert into queue_chart_hours (queue_id, hour, merged, waits, failed, flaky, computed_at)
    values ${sql.join(values)}
    on conflict (queue_id, hour) do update set merged = excluded.merged, waits = excluded.waits,
      failed = excluded.failed, flaky = excluded.flaky, computed_at = excluded.computed_at`.execute(db);
}
