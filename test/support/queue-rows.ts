// A queue's engine state as stored: the header row (merge_queues.header) with the PR entries and runs
// of queue_prs and queue_runs put back, read straight from the database (no app cache involved).
import type { Kysely } from 'kysely';
import type { QueueState } from '../../src/domain/queue/index.ts';
import type { Tables } from '../../src/store/schema.ts';

/** The stored state of queue `queueId`, or of the only queue when it is left out. */
export async function storedQueueState(db: Kysely<Tables>, queueId?: string): Promise<QueueState> {
  let query = db.selectFrom('merge_queues').select(['id', 'header']);
  if (queueId !== undefined) query = query.where('id', '=', queueId);
  const row = await query.executeTakeFirstOrThrow();
  return assembleStored(db, row.id, row.header);
}

/** A header put together with its queue's PR and run rows (PRs by number, runs in the state's order). */
export async function assembleStored(
  db: Kysely<Tables>,
  queueId: string,
  header: string,
): Promise<QueueState> {
  const state = JSON.parse(header) as QueueState;
  const prs = await db
    .selectFrom('queue_prs')
    .select('data')
    .where('queue_id', '=', queueId)
    .orderBy('number')
    .execute();
  const runs = await db
    .selectFrom('queue_runs')
    .select('data')
    .where('queue_id', '=', queueId)
    .orderBy('ord')
    .execute();
  state.prs = {};
  for (const r of prs) {
    const e = JSON.parse(r.data) as QueueState['prs'][string];
    state.prs[String(e.number)] = e;
  }
  state.runs = {};
  for (const r of runs) {
    const run = JSON.parse(r.data) as QueueState['runs'][string];
    state.runs[run.id] = run;
  }
  return state;
}
