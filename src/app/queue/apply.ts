import { type Kysely, PostgresAdapter } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import { AppError } from '../../domain/errors.ts';
import {
  nextWakeAt,
  type PrEntry,
  pruneHistory,
  type QueueAction,
  type QueueEvent,
  type QueueState,
  step,
  type TestRun,
} from '../../domain/queue/index.ts';
import { archive } from '../../store/queue/archive.ts';
import {
  findQueueById,
  findQueueByIdForUpdate,
  insertActions,
  type QueueRow,
  type QueueRowChanges,
  queueStateRows,
  queueVersion,
  saveQueueState,
} from '../../store/queue/queues.ts';
import type { Tables } from '../../store/schema.ts';
import { inTransaction } from '../../store/transaction.ts';
import type { Forge } from '../ports.ts';
import type { EndpointPresence } from '../webhooks-out/endpoints.ts';
import { enqueueQueueEvents } from '../webhooks-out/queue.ts';
import {
  actionJson,
  entryRowJson,
  type HistoryPart,
  historyChange,
  reliesOn,
  runRowJson,
  stateFromRows,
} from './row-shape.ts';
import { deepFreeze, QueueStateCache } from './state-cache.ts';
import type { QueueStepListeners } from './step-listeners.ts';

/**
 * Where queue states are read and saved: the database and the app's queue caches (the parsed states,
 * and the listeners told of each saved step). An AppContext is one.
 */
export interface QueueAccess {
  readonly db: Kysely<Tables>;
  readonly caches: {
    readonly queueStates: QueueStateCache;
    readonly queueSteps: QueueStepListeners;
    /** Whether organizations have webhook endpoints (an app's; without it, looked up at each finished PR). */
    readonly webhookEndpoints?: EndpointPresence;
  };
}

/** A queue row with its state. The state is shared (state-cache.ts) and frozen: read it, never change it. */
export interface LoadedQueue {
  readonly row: QueueRow;
  readonly state: QueueState;
}

/** The state from its header and rows (row-shape.ts), frozen. */
function assemble(
  header: string,
  rows: { prs: string[]; runs: string[]; history: { number: number; data: string }[] },
): QueueState {
  return deepFreeze(stateFromRows(header, rows));
}

/** How often a read outside a transaction retries when a save lands while it reads the rows. */
const READ_ATTEMPTS = 4;

/**
 * The queue's state as of `row.version`: from the cache when that version is known, else from its rows.
 * `locked`: the caller holds the queue row's lock in its transaction (applyEvent), so nobody saves
 * meanwhile; otherwise the rows are read between two reads of the version, and read again (with the
 * newer row) when a save landed in between. The row answered is the one the state belongs to.
 */
async function readState(
  db: Queryable,
  row: QueueRow,
  locked: boolean,
  cache: QueueStateCache,
): Promise<LoadedQueue> {
  let current = row;
  for (let attempt = 1; ; attempt++) {
    const known = cache.get(current.id, current.version);
    if (known !== undefined) return { row: current, state: known };
    const rows = await queueStateRows(db, current.id);
    if (locked || (await queueVersion(db, current.id)) === current.version) {
      const state = assemble(current.header, rows);
      cache.set(current.id, current.version, state);
      return { row: current, state };
    }
    if (attempt >= READ_ATTEMPTS) return lockedRead(db, current.id);
    const fresh = await findQueueById(db, current.id);
    if (fresh === undefined) throw new AppError('QUEUE_NOT_FOUND', 'The merge queue was deleted');
    current = fresh;
  }
}

/** Last resort of a read that kept losing to saves: read it under the queue's lock. */
async function lockedRead(db: Queryable, id: string): Promise<LoadedQueue> {
  const run = async (trx: Queryable) => {
    const row = await findQueueByIdForUpdate(trx, id);
    if (row === undefined) throw new AppError('QUEUE_NOT_FOUND', 'The merge queue was deleted');
    return readState(trx, row, true, NO_CACHE);
  };
  return inTransaction(db, run);
}

const NO_CACHE = new QueueStateCache(0);

/**
 * The queue row with its state (see readState); the state is shared and frozen. Inside a transaction
 * nothing is cached: the transaction may still roll back what it read.
 */
export function loadQueue(queues: QueueAccess, row: QueueRow): Promise<LoadedQueue> {
  const { db } = queues;
  return readState(db, row, false, db.isTransaction ? NO_CACHE : queues.caches.queueStates);
}

/** The state of a queue row (loadQueue's state). */
export async function queueStateOf(queues: QueueAccess, row: QueueRow): Promise<QueueState> {
  return (await loadQueue(queues, row)).state;
}

/** The rows a step changed: its PR entries and runs that are not the objects it was given (copy-on-write). */
export function rowChanges(before: QueueState, after: QueueState, version: number): QueueRowChanges {
  return stepChanges(before, after, version).rows;
}

/** rowChanges, with the PR entries and runs it found changed (the only parts of `after` not yet frozen). */
function stepChanges(
  before: QueueState,
  after: QueueState,
  version: number,
): { rows: QueueRowChanges; changed: (PrEntry | TestRun)[] } {
  const changed: (PrEntry | TestRun)[] = [];
  const prs: QueueRowChanges['prs'][number][] = [];
  const prUpdates: QueueRowChanges['prs'][number][] = [];
  /** PRs whose stored head changes or whose entry goes: runs stored without heads may rely on them. */
  const moved = new Set<number>();
  /** The history parts to add, and the PRs whose stored history goes first (row-shape.ts). */
  const history: HistoryPart[] = [];
  const historyCleared: number[] = [];
  const deletedPrs: number[] = [];
  // Both maps in ascending order side by side: one walk, no lookups.
  const a = after.prs;
  const b = before.prs;
  let j = 0;
  for (let i = 0; i < a.size; i += 1) {
    const n = a.keyAt(i);
    for (; j < b.size && b.keyAt(j) < n; j += 1) {
      deletedPrs.push(b.keyAt(j));
      moved.add(b.keyAt(j));
    }
    const e = a.valueAt(i);
    const was = j < b.size && b.keyAt(j) === n ? b.valueAt(j++) : undefined;
    if (was === e) continue;
    changed.push(e);
    const row = { number: e.number, state: e.state, head_sha: e.headSha, data: entryRowJson(e) };
    const h = historyChange(was, e);
    if (h.reset) historyCleared.push(n);
    if (h.part !== undefined) history.push(h.part);
    if (was?.headSha === e.headSha) prUpdates.push(row);
    else {
      prs.push(row);
      if (was !== undefined) moved.add(e.number);
    }
  }
  for (; j < b.size; j += 1) {
    deletedPrs.push(b.keyAt(j));
    moved.add(b.keyAt(j));
  }
  const runs: QueueRowChanges['runs'][number][] = [];
  const runUpdates: QueueRowChanges['runs'][number][] = [];
  const deletedRuns: string[] = [];
  // A new run goes after every run saved so far: versions only grow, and a step adds far fewer runs.
  let added = 0;
  const runRow = (r: TestRun, ord: number): QueueRowChanges['runs'][number] => ({
    id: r.id,
    ord,
    status: r.status,
    test_branch: r.testBranch,
    test_branch_sha: r.testBranchSha,
    data: runRowJson(r, after.prs),
  });
  for (const r of Object.values(after.runs)) {
    const was = before.runs[r.id];
    if (was === r) {
      // Unchanged, but its stored row may leave out a head that changes now: written again, whole.
      if (moved.size > 0 && reliesOn(r, moved)) runUpdates.push(runRow(r, 0));
      continue;
    }
    changed.push(r);
    const row = runRow(r, version * 1_000_000 + (was === undefined ? added++ : 0));
    const same = was?.testBranch === r.testBranch && was.testBranchSha === r.testBranchSha;
    (same ? runUpdates : runs).push(row);
  }
  for (const r of Object.values(before.runs)) if (after.runs[r.id] === undefined) deletedRuns.push(r.id);
  return {
    rows: { prs, deletedPrs, runs, deletedRuns, prUpdates, runUpdates, history, historyCleared },
    changed,
  };
}

/**
 * Freezes a stepped state whose unchanged entries and runs are the (frozen) objects of the state it
 * came from: the changed ones, the two maps and the rest of the state, without walking the 1,000 entries.
 */
function freezeStepped(state: QueueState, changed: readonly (PrEntry | TestRun)[]): QueueState {
  for (const part of changed) deepFreeze(part);
  state.prs.freeze();
  Object.freeze(state.runs);
  return deepFreeze(state);
}

/** The header row's JSON: the state without its PR entries and runs (kept in place, empty, for the key order). */
function headerOf(state: QueueState): string {
  return JSON.stringify({ ...state, prs: {}, runs: {} });
}

/**
 * How often a save may lose a race to another writer before giving up (each retry re-reads). The row is
 * locked while it is read (findQueueByIdForUpdate), so a lost race needs a writer that bypassed the lock.
 */
const MAX_ATTEMPTS = 8;

/** Answered 409 with Retry-After, never a 5xx: the request was valid and may simply be sent again. */
export class QueueConflictError extends AppError {
  constructor(queueId: string) {
    super('CONFLICT', `queue ${queueId} is being changed by others; send the request again`, {
      headers: { 'retry-after': '1' },
    });
  }
}

/**
 * When the runner should tick the queue next. The engine reports a batching wait that has already
 * passed while no slot is free to start the batch; ticking then changes nothing (the freed slot's
 * own event starts it), so only a time still ahead is stored.
 */
function futureWake(state: QueueState, now: number): number | null {
  const at = nextWakeAt(state);
  return at !== null && at > now ? at : null;
}

/**
 * Feeds one event to the engine and stores the outcome: the new state (only if nobody saved since it
 * was read: optimistic concurrency on `version`, retried on a lost race) and the actions it asked for,
 * in an outbox the runner carries out. Finished PRs and runs nothing refers to any more move from the
 * state to the archive (so the state stays the size of the live queue). All in one transaction, so a crash
 * loses neither; actions are idempotent, so repeating one after a crash is harmless. Once committed,
 * the step is announced to its listeners (step-listeners.ts: the metrics).
 */
export async function applyEvent(
  queues: QueueAccess,
  queueId: string,
  event: QueueEvent,
  now: number,
): Promise<{ state: QueueState; actions: QueueAction[] }> {
  const { db } = queues;
  const cache = queues.caches.queueStates;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const outcome = await inTransaction(db, async (trx) => {
      const row = await findQueueByIdForUpdate(trx, queueId);
      if (row === undefined) throw new Error(`queue ${queueId} vanished`);
      const before = (await readState(trx, row, true, cache)).state;
      const stepped = step(before, event, now);
      const pruned = pruneHistory(stepped.state);
      const result = { state: pruned.state, actions: stepped.actions };
      const version = row.version + 1;
      const changes = stepChanges(before, result.state, version);
      const saved = await saveQueueState(
        trx,
        queueId,
        row.version,
        { header: headerOf(result.state), wake_at: futureWake(result.state, now), updated_at: now },
        changes.rows,
      );
      if (!saved) return undefined;
      await archive(trx, queueId, pruned.prs, pruned.runs, now);
      // What the process knows of the organization's endpoints is trusted on SQLite only (one server
      // per database file; on PostgreSQL another replica may add one): webhooks-out/endpoints.ts.
      const presence =
        trx.getExecutor().adapter instanceof PostgresAdapter ? undefined : queues.caches.webhookEndpoints;
      await enqueueQueueEvents(trx, row, before, stepped.state, now, presence);
      await insertActions(trx, queueId, result.actions.map(actionJson), now);
      return { result, before, after: stepped.state, version, changed: changes.changed };
    });
    if (outcome !== undefined) {
      // Only once committed: a rolled-back step must not be taken for the saved state.
      cache.set(queueId, outcome.version, freezeStepped(outcome.result.state, outcome.changed));
      // After the commit: what listeners (the metrics) count has happened for good.
      await queues.caches.queueSteps.announce({ queueId, before: outcome.before, after: outcome.after, now });
      return outcome.result;
    }
  }
  throw new QueueConflictError(queueId);
}

/** The engine event for what the forge says the required statuses are. */
export function discoveredEvent(found: Awaited<ReturnType<Forge['requiredStatuses']>>): QueueEvent {
  return {
    type: 'required_statuses_discovered',
    serviceConfig: found.serviceConfig,
    branchProtection: found.branchProtection,
  };
}
