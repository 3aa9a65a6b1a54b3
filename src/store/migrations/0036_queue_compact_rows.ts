import { type Kysely, sql } from 'kysely';

/** Changes an entry's row keeps (src/app/queue/row-shape.ts INLINE_HISTORY, as of this migration). */
const INLINE_HISTORY = 2;

/**
 * Two parts of a queue's rows written once instead of again at every restart (issue 26: a failing head
 * at 1,000 PRs queued wrote 113 KB):
 * - A live PR entry's history (its state changes) leaves its queue_prs row, but for its first two changes,
 *   for queue_pr_history, in parts: each step writes the changes it added (src/app/queue/row-shape.ts).
 *   Up: the rest of every stored history moves there, as one part. Down: the parts go back into their
 *   entries' rows and the table is dropped.
 * - An archived run may be stored without its heads (the commit of each PR merged into its test branch),
 *   naming in `prHeadsOf` the run archived in the same step that holds them (src/store/queue/archive.ts).
 *   Up: nothing to change, runs archived whole read as they are. Down: those runs are written whole again,
 *   as the versions before this read them (heads in their own order: dependsOn, then tested).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('queue_pr_history')
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('queue_pr_history_pk', ['queue_id', 'number', 'idx'])
    .execute();
  const prs = await sql<{ queue_id: string; number: number; data: string }>`
    select queue_id, number, data from queue_prs`.execute(db);
  for (const row of prs.rows) {
    const entry = JSON.parse(row.data) as { history: unknown[] };
    if (entry.history.length <= INLINE_HISTORY) continue;
    const rest = JSON.stringify(entry.history.slice(INLINE_HISTORY));
    await sql`insert into queue_pr_history (queue_id, number, idx, data)
      values (${row.queue_id}, ${row.number}, ${INLINE_HISTORY}, ${rest})`.execute(db);
    const data = JSON.stringify({ ...entry, history: entry.history.slice(0, INLINE_HISTORY) });
    await sql`update queue_prs set data = ${data} where queue_id = ${row.queue_id} and number = ${row.number}`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const parts = await sql<{ queue_id: string; number: number; data: string }>`
    select queue_id, number, data from queue_pr_history order by queue_id, number, idx`.execute(db);
  const histories = new Map<string, { queueId: string; number: number; changes: unknown[] }>();
  for (const part of parts.rows) {
    const key = `${part.queue_id} ${part.number}`;
    let held = histories.get(key);
    if (held === undefined) {
      held = { queueId: part.queue_id, number: Number(part.number), changes: [] };
      histories.set(key, held);
    }
    held.changes.push(...(JSON.parse(part.data) as unknown[]));
  }
  for (const h of histories.values()) {
    const row = await sql<{ data: string }>`
      select data from queue_prs where queue_id = ${h.queueId} and number = ${h.number}`.execute(db);
    const text = row.rows[0]?.data;
    if (text === undefined) continue;
    const entry = JSON.parse(text) as { history: unknown[] };
    const data = JSON.stringify({ ...entry, history: [...entry.history, ...h.changes] });
    await sql`update queue_prs set data = ${data} where queue_id = ${h.queueId} and number = ${h.number}`.execute(
      db,
    );
  }
  await db.schema.dropTable('queue_pr_history').execute();
  const rows = await sql<{ queue_id: string; key: string; data: string }>`
    select queue_id, key, data from queue_archive
    where kind = 'run' and data like ${'%"prHeadsOf"%'}`.execute(db);
  const holders = new Map<string, Map<number, string>>();
  for (const row of rows.rows) {
    const run = JSON.parse(row.data) as RunLike;
    if (run.prHeadsOf === undefined) continue;
    const shas = await holderHeads(db, holders, row.queue_id, run.prHeadsOf);
    const whole: Record<string, unknown> = {};
    // The key where the versions before this wrote it: after dependsOn.
    for (const [key, value] of Object.entries(run)) {
      if (key === 'prHeadsOf') continue;
      whole[key] = value;
      if (key === 'dependsOn')
        whole['prHeads'] = [...run.dependsOn, ...run.tested].map((n) => ({ number: n, sha: shas.get(n) }));
    }
    await sql`update queue_archive set data = ${JSON.stringify(whole)}
      where queue_id = ${row.queue_id} and kind = 'run' and key = ${row.key}`.execute(db);
  }
}

/** The heads of an archived run that holds others' (stored whole), by PR number. */
async function holderHeads(
  db: Kysely<unknown>,
  held: Map<string, Map<number, string>>,
  queueId: string,
  runId: string,
): Promise<Map<number, string>> {
  const key = `${queueId} ${runId}`;
  const known = held.get(key);
  if (known !== undefined) return known;
  const row = await sql<{ data: string }>`
    select data from queue_archive where queue_id = ${queueId} and kind = 'run' and key = ${runId}`.execute(
    db,
  );
  const text = row.rows[0]?.data;
  if (text === undefined) throw new Error(`archived run ${runId}, which holds other runs' heads, is missing`);
  const shas = new Map((JSON.parse(text) as { prHeads: Head[] }).prHeads.map((h) => [h.number, h.sha]));
  held.set(key, shas);
  return shas;
}

interface Head {
  number: number;
  sha: string;
}

interface RunLike {
  dependsOn: number[];
  tested: number[];
  prHeadsOf?: string;
}
