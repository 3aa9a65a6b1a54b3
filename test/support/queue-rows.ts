// A queue's engine state as stored: the header row (merge_queues.header) with the PR entries and runs
// of queue_prs and queue_runs (and the entries' histories of queue_pr_history) put back, read straight
// from the database (no app cache involved).
import type { Kysely } from 'kysely';
import { stateFromRows } from '../../src/app/queue/row-shape.ts';
import type { QueueState } from '../../src/domain/queue/index.ts';
import { queueStateRows } from '../../src/store/queue/queues.ts';
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
  const rows = await queueStateRows(db, queueId);
  // Read as the app reads them: a run row may leave out the heads its PR entries give, an entry row its
  // history (row-shape.ts).
  return stateFromRows(header, rows);
}
