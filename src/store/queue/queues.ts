import { type Insertable, PostgresAdapter, type Selectable } from 'kysely';
import { chunked, insertMany, type Queryable } from '../../db/bulk.ts';
import type {
  MergeQueuesTable,
  QueueActionsTable,
  QueuePrHistoryTable,
  QueuePrsTable,
  QueueRunsTable,
} from '../schema.ts';

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

/** The version of a queue's state now; undefined once the queue is gone. */
export async function queueVersion(db: Queryable, id: string): Promise<number | undefined> {
  const row = await db.selectFrom('merge_queues').select('version').where('id', '=', id).executeTakeFirst();
  return row?.version;
}

/**
 * The JSON of a queue's live PR entries (by number) and test runs (in the state's order), and the parts
 * of the entries' histories (by number, then index: app/queue/row-shape.ts).
 */
export async function queueStateRows(
  db: Queryable,
  id: string,
): Promise<{ prs: string[]; runs: string[]; history: { number: number; data: string }[] }> {
  const prs = await db
    .selectFrom('queue_prs')
    .select('data')
    .where('queue_id', '=', id)
    .orderBy('number')
    .execute();
  const runs = await db
    .selectFrom('queue_runs')
    .select('data')
    .where('queue_id', '=', id)
    .orderBy('ord')
    .execute();
  const history = await db
    .selectFrom('queue_pr_history')
    .select(['number', 'data'])
    .where('queue_id', '=', id)
    .orderBy('number')
    .orderBy('idx')
    .execute();
  return { prs: prs.map((r) => r.data), runs: runs.map((r) => r.data), history };
}

/** The rows one step changed: entries and runs to write (insert or replace) and keys to delete. */
export interface QueueRowChanges {
  readonly prs: readonly Omit<Insertable<QueuePrsTable>, 'queue_id'>[];
  readonly deletedPrs: readonly number[];
  /** `ord` is used only when the run is new: a run keeps its place in the order. */
  readonly runs: readonly Omit<Insertable<QueueRunsTable>, 'queue_id'>[];
  readonly deletedRuns: readonly string[];
  /**
   * Stored entries and runs whose indexed columns (head_sha; test_branch, test_branch_sha) are as
   * stored: only their other columns are written, so SQLite leaves those indexes' pages alone.
   */
  readonly prUpdates?: readonly Omit<Insertable<QueuePrsTable>, 'queue_id'>[];
  readonly runUpdates?: readonly Omit<Insertable<QueueRunsTable>, 'queue_id'>[];
  /** Parts of entries' histories to add (entry rows leave their history out: app/queue/row-shape.ts). */
  readonly history?: readonly Omit<Insertable<QueuePrHistoryTable>, 'queue_id'>[];
  /** PRs whose stored history goes before parts are added (besides deletedPrs: a new submission). */
  readonly historyCleared?: readonly number[];
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

/**
 * Saves a new state if nobody saved since `version` was read (false when the race was lost): the header
 * row, then the PR entries and runs the step changed. Every change of those rows goes through here with
 * a version bump, so a reader that sees the same version before and after reading them read one state.
 */
export async function saveQueueState(
  db: Queryable,
  id: string,
  expectedVersion: number,
  patch: { header: string; wake_at: number | null; updated_at: number },
  changes: QueueRowChanges,
): Promise<boolean> {
  const result = await db
    .updateTable('merge_queues')
    .set({ ...patch, version: expectedVersion + 1 })
    .where('id', '=', id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  for (const part of chunked(changes.deletedPrs)) {
    await db.deleteFrom('queue_prs').where('queue_id', '=', id).where('number', 'in', part).execute();
  }
  const historyGone = [...changes.deletedPrs, ...(changes.historyCleared ?? [])];
  for (const part of chunked(historyGone)) {
    await db.deleteFrom('queue_pr_history').where('queue_id', '=', id).where('number', 'in', part).execute();
  }
  for (const part of chunked(changes.deletedRuns)) {
    await db.deleteFrom('queue_runs').where('queue_id', '=', id).where('id', 'in', part).execute();
  }
  // One multi-row statement per table and shape (db/bulk.ts), not a query built value by value: a step
  // that restarts the runs behind a failure writes dozens of rows. SQLite rewrites an index entry
  // whenever its column is assigned, even to the same value, so rows whose indexed columns did not
  // change assign only the others (fewer pages to write at commit); PostgreSQL compares values itself
  // (HOT updates), so there every row goes in one statement, one round trip.
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const prUpdates = changes.prUpdates ?? [];
  const runUpdates = changes.runUpdates ?? [];
  const prs = pg ? [...changes.prs, ...prUpdates] : changes.prs;
  const runs = pg ? [...changes.runs, ...runUpdates] : changes.runs;
  await upsertRows(db, 'queue_prs', id, prs, 'number', ['state', 'head_sha', 'data']);
  await upsertRows(db, 'queue_runs', id, runs, 'id', ['status', 'test_branch', 'test_branch_sha', 'data']);
  if (!pg) {
    await upsertRows(db, 'queue_prs', id, prUpdates, 'number', ['state', 'data']);
    await upsertRows(db, 'queue_runs', id, runUpdates, 'id', ['status', 'data']);
  }
  await insertMany(
    db,
    'queue_pr_history',
    (changes.history ?? []).map((h) => ({ queue_id: id, ...h })),
  );
  return true;
}

/** Writes a queue's rows of one table: new ones inserted, existing ones (by `key`) given the new `columns`. */
function upsertRows(
  db: Queryable,
  table: 'queue_prs' | 'queue_runs',
  queueId: string,
  rows: readonly Record<string, unknown>[],
  key: string,
  columns: readonly string[],
): Promise<number> {
  return insertMany(
    db,
    table,
    rows.map((r) => ({ queue_id: queueId, ...r })),
    { updateOnConflict: { key: ['queue_id', key], columns, expectConflicts: true } },
  );
}

/** Ids of the queues with a PR entry that has not ended (merged, failed, cancelled). */
export async function queuesWithLivePrs(db: Queryable): Promise<Set<string>> {
  const rows = await db
    .selectFrom('queue_prs')
    .select('queue_id')
    .where('state', 'not in', ['merged', 'failed', 'cancelled'])
    .distinct()
    .execute();
  return new Set(rows.map((r) => r.queue_id));
}

/** Live (not ended) PR entries of a repository's queues whose head is `sha`, by queue. */
export async function livePrsAtHead(
  db: Queryable,
  queueIds: readonly string[],
  sha: string,
): Promise<{ queue_id: string; data: string }[]> {
  if (queueIds.length === 0) return [];
  return db
    .selectFrom('queue_prs')
    .select(['queue_id', 'data'])
    .where('head_sha', '=', sha)
    .where('queue_id', 'in', [...queueIds])
    .where('state', 'not in', ['merged', 'failed', 'cancelled'])
    .orderBy('queue_id')
    .orderBy('number')
    .execute();
}

/** A repository's live test runs whose test branch is at `sha` or named `branch`. */
export function runsAtCommitOrBranch(
  db: Queryable,
  repoId: string,
  sha: string,
  branch: string,
): Promise<{ queue_id: string; id: string; test_branch: string }[]> {
  return db
    .selectFrom('queue_runs as r')
    .innerJoin('merge_queues as q', 'q.id', 'r.queue_id')
    .select(['r.queue_id', 'r.id', 'r.test_branch'])
    .where('q.repo_id', '=', repoId)
    .where((eb) => eb.or([eb('r.test_branch_sha', '=', sha), eb('r.test_branch', '=', branch)]))
    .orderBy('q.branch')
    .orderBy('r.ord')
    .execute();
}

export async function deleteQueue(db: Queryable, id: string): Promise<void> {
  await db.deleteFrom('queue_actions').where('queue_id', '=', id).execute();
  await db.deleteFrom('queue_pr_history').where('queue_id', '=', id).execute();
  await db.deleteFrom('queue_prs').where('queue_id', '=', id).execute();
  await db.deleteFrom('queue_runs').where('queue_id', '=', id).execute();
  await db.deleteFrom('merge_queues').where('id', '=', id).execute();
}

export async function insertActions(
  db: Queryable,
  queueId: string,
  actions: readonly string[],
  now: number,
): Promise<void> {
  await insertMany(
    db,
    'queue_actions',
    actions.map((action) => ({
      queue_id: queueId,
      action,
      created_at: now,
      done_at: null,
      last_error: null,
    })),
  );
}

/** The queue's actions not done and due at `now` (one waiting on the forge is passed over), oldest first. */
export function pendingActions(
  db: Queryable,
  queueId: string,
  limit: number,
  now: number,
): Promise<QueueActionRow[]> {
  return db
    .selectFrom('queue_actions')
    .selectAll()
    .where('queue_id', '=', queueId)
    .where('done_at', 'is', null)
    .where((eb) => eb.or([eb('not_before', 'is', null), eb('not_before', '<=', now)]))
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

/**
 * An action the forge answered "not yet": carried out again at `notBefore`, with what it waits for
 * as its last_error; not a failed attempt.
 */
export async function markActionWaiting(
  db: Queryable,
  id: number,
  notBefore: number,
  why: string,
): Promise<void> {
  await db
    .updateTable('queue_actions')
    .set({ not_before: notBefore, last_error: why.slice(0, 2000) })
    .where('id', '=', id)
    .execute();
}

/** Makes the queue's waiting actions due now (the forge told us something changed). */
export async function wakeWaitingActions(db: Queryable, queueId: string, now: number): Promise<void> {
  await db
    .updateTable('queue_actions')
    .set({ not_before: now })
    .where('queue_id', '=', queueId)
    .where('done_at', 'is', null)
    .where('not_before', '>', now)
    .execute();
}

/**
 * Makes the waiting actions of the repository's queues due now, for a forge event that may concern any
 * of them. Looks first, so the usual event (nothing waits) writes nothing: an UPDATE would take
 * SQLite's write lock even when it matches no row, queueing behind an ingest transaction.
 */
export async function wakeRepositoryWaitingActions(
  db: Queryable,
  repoId: string,
  now: number,
): Promise<void> {
  const queues = db.selectFrom('merge_queues').select('id').where('repo_id', '=', repoId);
  const waiting = await db
    .selectFrom('queue_actions')
    .select('queue_id')
    .where('queue_id', 'in', queues)
    .where('done_at', 'is', null)
    .where('not_before', '>', now)
    .limit(1)
    .executeTakeFirst();
  if (waiting === undefined) return;
  await db
    .updateTable('queue_actions')
    .set({ not_before: now })
    .where('queue_id', 'in', queues)
    .where('done_at', 'is', null)
    .where('not_before', '>', now)
    .execute();
}

/** Ids of queues with work: actions not done yet and due, or a wake time that has come. */
export async function queuesNeedingWork(db: Queryable, now: number): Promise<string[]> {
  const withActions = await db
    .selectFrom('queue_actions')
    .select('queue_id')
    .where('done_at', 'is', null)
    .where((eb) => eb.or([eb('not_before', 'is', null), eb('not_before', '<=', now)]))
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
