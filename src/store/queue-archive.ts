import type { PrEntry, TestRun } from '../domain/queue/index.ts';
import { chunked, type Queryable } from './db.ts';

/** Stores finished PR submissions and runs taken out of a queue's live state (idempotent). */
export async function archive(
  db: Queryable,
  queueId: string,
  prs: readonly PrEntry[],
  runs: readonly TestRun[],
  at: number,
): Promise<void> {
  const rows = [
    ...prs.map((e) => ({
      queue_id: queueId,
      kind: 'pr',
      key: e.id,
      pr_number: e.number,
      state: e.state,
      seq: e.seq,
      data: JSON.stringify(e),
      archived_at: at,
    })),
    ...runs.map((r) => ({
      queue_id: queueId,
      kind: 'run',
      key: r.id,
      pr_number: null,
      state: r.status,
      seq: null,
      data: JSON.stringify(r),
      archived_at: at,
    })),
  ];
  for (const part of chunked(rows, 200)) {
    await db
      .insertInto('queue_archive')
      .values(part)
      .onConflict((oc) => oc.columns(['queue_id', 'kind', 'key']).doNothing())
      .execute();
  }
}

/** The latest archived submission of a PR. */
export async function archivedPr(
  db: Queryable,
  queueId: string,
  prNumber: number,
): Promise<PrEntry | undefined> {
  const row = await db
    .selectFrom('queue_archive')
    .select('data')
    .where('queue_id', '=', queueId)
    .where('kind', '=', 'pr')
    .where('pr_number', '=', prNumber)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.data) as PrEntry);
}

/** Archived submissions after sequence number `after`, in order, optionally only in one final state. */
export async function archivedPrs(
  db: Queryable,
  queueId: string,
  after: number,
  state: string | undefined,
  limit: number,
): Promise<PrEntry[]> {
  let query = db
    .selectFrom('queue_archive')
    .select('data')
    .where('queue_id', '=', queueId)
    .where('kind', '=', 'pr')
    .where('seq', '>', after);
  if (state !== undefined) query = query.where('state', '=', state);
  const rows = await query.orderBy('seq').limit(limit).execute();
  return rows.map((r) => JSON.parse(r.data) as PrEntry);
}

export async function archivedRun(
  db: Queryable,
  queueId: string,
  runId: string,
): Promise<TestRun | undefined> {
  const row = await db
    .selectFrom('queue_archive')
    .select('data')
    .where('queue_id', '=', queueId)
    .where('kind', '=', 'run')
    .where('key', '=', runId)
    .executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.data) as TestRun);
}

/** How many archived submissions ended in each state. */
export async function archivedPrCounts(db: Queryable, queueId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('queue_archive')
    .select((eb) => ['state', eb.fn.countAll<number>().as('n')])
    .where('queue_id', '=', queueId)
    .where('kind', '=', 'pr')
    .groupBy('state')
    .execute();
  return new Map(rows.map((r) => [r.state ?? '', Number(r.n)]));
}
