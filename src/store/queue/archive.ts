import { chunked, insertMany, type Queryable } from '../../db/bulk.ts';
import type { PrEntry, TestRun } from '../../domain/queue/index.ts';

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
  // One multi-row statement (db/bulk.ts): a step that restarts the runs behind a failure archives dozens.
  await insertMany(db, 'queue_archive', rows, { ignoreConflicts: true });
}

/** The JSON of a queue's archived PR submissions or runs, to narrow down. */
function archived(db: Queryable, queueId: string, kind: 'pr' | 'run') {
  return db
    .selectFrom('queue_archive')
    .select('data')
    .where('queue_id', '=', queueId)
    .where('kind', '=', kind);
}

/** The latest archived submission of a PR. */
export async function archivedPr(
  db: Queryable,
  queueId: string,
  prNumber: number,
): Promise<PrEntry | undefined> {
  const row = await archived(db, queueId, 'pr')
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
  let query = archived(db, queueId, 'pr').where('seq', '>', after);
  if (state !== undefined) query = query.where('state', '=', state);
  const rows = await query.orderBy('seq').limit(limit).execute();
  return rows.map((r) => JSON.parse(r.data) as PrEntry);
}

export async function archivedRun(
  db: Queryable,
  queueId: string,
  runId: string,
): Promise<TestRun | undefined> {
  const row = await archived(db, queueId, 'run').where('key', '=', runId).executeTakeFirst();
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

/** The latest archived submission of each of these PRs (one statement per chunk, not one per PR). */
export async function archivedPrsByNumber(
  db: Queryable,
  queueId: string,
  prNumbers: readonly number[],
): Promise<Map<number, PrEntry>> {
  const out = new Map<number, { seq: number; data: string }>();
  for (const part of chunked([...new Set(prNumbers)])) {
    const rows = await db
      .selectFrom('queue_archive')
      .select(['pr_number', 'seq', 'data'])
      .where('queue_id', '=', queueId)
      .where('kind', '=', 'pr')
      .where('pr_number', 'in', part)
      .execute();
    for (const r of rows) {
      const n = Number(r.pr_number);
      const seq = Number(r.seq);
      const held = out.get(n);
      if (held === undefined || seq > held.seq) out.set(n, { seq, data: r.data });
    }
  }
  return new Map([...out].map(([n, r]) => [n, JSON.parse(r.data) as PrEntry]));
}

/** Archived runs by id (one statement per chunk); ids not archived are absent. */
export async function archivedRuns(
  db: Queryable,
  queueId: string,
  runIds: readonly string[],
): Promise<Map<string, TestRun>> {
  const out = new Map<string, TestRun>();
  for (const part of chunked([...new Set(runIds)])) {
    const rows = await db
      .selectFrom('queue_archive')
      .select(['key', 'data'])
      .where('queue_id', '=', queueId)
      .where('kind', '=', 'run')
      .where('key', 'in', part)
      .execute();
    for (const r of rows) out.set(r.key, JSON.parse(r.data) as TestRun);
  }
  return out;
}

/** archivedPrCounts of several queues in one statement: queue id → state → count. */
export async function archivedPrCountsOf(
  db: Queryable,
  queueIds: readonly string[],
): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>(queueIds.map((id) => [id, new Map()]));
  for (const part of chunked([...queueIds])) {
    const rows = await db
      .selectFrom('queue_archive')
      .select((eb) => ['queue_id', 'state', eb.fn.countAll<number>().as('n')])
      .where('queue_id', 'in', part)
      .where('kind', '=', 'pr')
      .groupBy(['queue_id', 'state'])
      .execute();
    for (const r of rows) out.get(r.queue_id)?.set(r.state ?? '', Number(r.n));
  }
  return out;
}
