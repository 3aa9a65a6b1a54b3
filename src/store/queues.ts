import { type Insertable, PostgresAdapter, type Selectable } from 'kysely';
import type { Queryable } from './db.ts';
import type { MergeQueuesTable, QueueActionsTable } from './schema.ts';

export type QueueRow = Selectable<MergeQueuesTable>;
export type QueueActionRow = Selectable<QueueActionsTable>;

/** Inserts the queue unless the repository already has one for the branch; true when inserted. */
export async function insertQueueIfAbsent(
  db: Queryable,
  row: Insertable<MergeQueuesTable>,
): Promise<boolean> {
  const result = await db
    .insertInto('merge_queues')
    .values(row)
    .onConflict((oc) => oc.columns(['repo_id', 'branch']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export function findQueue(db: Queryable, repoId: string, branch: string): Promise<QueueRow | undefined> {
  return db
    .selectFrom('merge_queues')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('branch', '=', branch)
    .executeTakeFirst();
}

/** The queue row without its state (which `queueStateAt` reads), for reads that may have it parsed already. */
export function findQueueHeader(
  db: Queryable,
  repoId: string,
  branch: string,
): Promise<Omit<QueueRow, 'state'> | undefined> {
  return db
    .selectFrom('merge_queues')
    .select([
      'id',
      'repo_id',
      'branch',
      'version',
      'created_at',
      'updated_at',
      'wake_at',
      'lease_owner',
      'lease_until',
      'flake_protection',
      'extension_enabled',
      'enqueueing_label',
      'label_commands_enabled',
      'state_labels_enabled',
    ])
    .where('repo_id', '=', repoId)
    .where('branch', '=', branch)
    .executeTakeFirst();
}

/** The queue's state text while it is still at version, else undefined (someone saved since). */
export async function queueStateAt(db: Queryable, id: string, version: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('merge_queues')
    .select('state')
    .where('id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst();
  return row?.state;
}

export function findQueueById(db: Queryable, id: string): Promise<QueueRow | undefined> {
  return db.selectFrom('merge_queues').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The queue row, locked until the transaction ends on PostgreSQL (`for update`), so writers of one
 * queue take turns instead of racing to save: under READ COMMITTED, 25 concurrent updateQueue calls lost
 * the optimistic save more often than they retried. SQLite has one writer at a time already.
 */
export function findQueueByIdForUpdate(db: Queryable, id: string): Promise<QueueRow | undefined> {
  const query = db.selectFrom('merge_queues').selectAll().where('id', '=', id);
  return (db.getExecutor().adapter instanceof PostgresAdapter ? query.forUpdate() : query).executeTakeFirst();
}

export function listQueues(db: Queryable, repoIds: readonly string[] | undefined): Promise<QueueRow[]> {
  let query = db.selectFrom('merge_queues').selectAll();
  if (repoIds !== undefined) query = query.where('repo_id', 'in', repoIds.length > 0 ? [...repoIds] : ['']);
  return query.orderBy('repo_id').orderBy('branch').execute();
}

/** Saves a new state if nobody saved since `version` was read; false when the race was lost. */
export async function saveQueueState(
  db: Queryable,
  id: string,
  expectedVersion: number,
  patch: { state: string; wake_at: number | null; updated_at: number },
): Promise<boolean> {
  const result = await db
    .updateTable('merge_queues')
    .set({ ...patch, version: expectedVersion + 1 })
    .where('id', '=', id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteQueue(db: Queryable, id: string): Promise<void> {
  await db.deleteFrom('queue_actions').where('queue_id', '=', id).execute();
  await db.deleteFrom('merge_queues').where('id', '=', id).execute();
}

export async function insertActions(
  db: Queryable,
  queueId: string,
  actions: readonly string[],
  now: number,
): Promise<void> {
  if (actions.length === 0) return;
  await db
    .insertInto('queue_actions')
    .values(
      actions.map((action) => ({
        queue_id: queueId,
        action,
        created_at: now,
        done_at: null,
        last_error: null,
      })),
    )
    .execute();
}

export function pendingActions(db: Queryable, queueId: string, limit: number): Promise<QueueActionRow[]> {
  return db
    .selectFrom('queue_actions')
    .selectAll()
    .where('queue_id', '=', queueId)
    .where('done_at', 'is', null)
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function markActionDone(db: Queryable, id: number, at: number): Promise<void> {
  await db.updateTable('queue_actions').set({ done_at: at }).where('id', '=', id).execute();
}

export async function markActionFailed(db: Queryable, id: number, error: string): Promise<void> {
  await db
    .updateTable('queue_actions')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error.slice(0, 2000) }))
    .where('id', '=', id)
    .execute();
}

/** Ids of queues with work: actions not done yet, or a wake time that has come. */
export async function queuesNeedingWork(db: Queryable, now: number): Promise<string[]> {
  const withActions = await db
    .selectFrom('queue_actions')
    .select('queue_id')
    .where('done_at', 'is', null)
    .distinct()
    .execute();
  const woken = await db.selectFrom('merge_queues').select('id').where('wake_at', '<=', now).execute();
  return [...new Set([...withActions.map((r) => r.queue_id), ...woken.map((r) => r.id)])];
}

/**
 * Takes or renews the queue's lease for `owner` until `until`; false when another runner holds an
 * unexpired lease. One conditional UPDATE, so it is atomic on both engines.
 */
export async function acquireLease(
  db: Queryable,
  queueId: string,
  owner: string,
  now: number,
  until: number,
): Promise<boolean> {
  const result = await db
    .updateTable('merge_queues')
    .set({ lease_owner: owner, lease_until: until })
    .where('id', '=', queueId)
    .where((eb) =>
      eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', owner), eb('lease_until', '<', now)]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function releaseLease(db: Queryable, queueId: string, owner: string): Promise<void> {
  await db
    .updateTable('merge_queues')
    .set({ lease_owner: null, lease_until: null })
    .where('id', '=', queueId)
    .where('lease_owner', '=', owner)
    .execute();
}

/** The queue's GitHub label settings as stored (booleans 0/1); fields left out stay unchanged. */
export interface QueueLabelColumns {
  extension_enabled?: number;
  enqueueing_label?: string;
  label_commands_enabled?: number;
  state_labels_enabled?: number;
}

export async function saveQueueLabelSettings(
  db: Queryable,
  queueId: string,
  patch: QueueLabelColumns,
): Promise<void> {
  if (Object.keys(patch).length === 0) return;
  await db.updateTable('merge_queues').set(patch).where('id', '=', queueId).execute();
}
