import type { Kysely } from 'kysely';
import { LEASE_MS } from '../../../src/runner/queue-runner.ts';
import type { Tables } from '../../../src/store/schema.ts';
import { assembleStored } from '../../support/queue-rows.ts';
import type { RepoRef } from './git-remote.ts';

/** The parts of a queue's stored engine state (domain/queue QueueState) the faults tests look at. */
export interface StoredQueue {
  readonly id: string;
  readonly version: number;
  readonly leaseOwner: string | null;
  readonly leaseUntil: number | null;
  readonly merging: { prNumber: number; direct: boolean } | null;
  readonly prs: Record<string, { number: number; state: string }>;
  readonly runs: Record<
    string,
    { id: string; status: string; testBranchSha: string | null; tested: number[] }
  >;
  readonly pendingActions: { id: number; type: string; attempts: number; lastError: string | null }[];
}

/** Reads a queue's row (state, lease) and its unfinished outbox actions straight from the database. */
export async function readQueue(db: Kysely<Tables>, repo: RepoRef, branch = 'main'): Promise<StoredQueue> {
  const row = await db
    .selectFrom('merge_queues')
    .innerJoin('repositories', 'repositories.id', 'merge_queues.repo_id')
    .select([
      'merge_queues.id',
      'merge_queues.version',
      'merge_queues.header',
      'merge_queues.lease_owner',
      'merge_queues.lease_until',
    ])
    .where('repositories.owner', '=', repo.owner)
    .where('repositories.name', '=', repo.name)
    .where('merge_queues.branch', '=', branch)
    .executeTakeFirstOrThrow();
  const actions = await db
    .selectFrom('queue_actions')
    .select(['id', 'action', 'attempts', 'last_error'])
    .where('queue_id', '=', row.id)
    .where('done_at', 'is', null)
    .orderBy('id')
    .execute();
  const state = (await assembleStored(db, row.id, row.header)) as unknown as Pick<
    StoredQueue,
    'merging' | 'prs' | 'runs'
  >;
  return {
    id: row.id,
    version: row.version,
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    merging: state.merging,
    prs: state.prs,
    runs: state.runs,
    pendingActions: actions.map((a) => ({
      id: a.id,
      type: (JSON.parse(a.action) as { type: string }).type,
      attempts: a.attempts,
      lastError: a.last_error,
    })),
  };
}

/** Every outbox action of the queue that needed more than one attempt, with its last error. */
export async function retriedActions(db: Kysely<Tables>, queueId: string) {
  return db
    .selectFrom('queue_actions')
    .select(['id', 'action', 'attempts', 'last_error', 'done_at'])
    .where('queue_id', '=', queueId)
    .where('attempts', '>', 0)
    .execute();
}

/**
 * Waits until a live runner holds the queue's lease — one other than `deadOwner`, or `deadOwner`'s id
 * renewed after `since` (a restarted single SQLite server keeps its runner id and resumes at once) —
 * and answers how long after `since` that was. Needs the queue to have work (runners take a lease only then).
 */
export async function awaitTakeover(
  db: Kysely<Tables>,
  repo: RepoRef,
  deadOwner: string | null,
  since: number,
  timeoutMs: number,
): Promise<{ owner: string; afterMs: number }> {
  const deadline = since + timeoutMs;
  for (;;) {
    const q = await readQueue(db, repo);
    const renewed = q.leaseUntil !== null && q.leaseUntil - LEASE_MS > since;
    if (q.leaseOwner !== null && (q.leaseOwner !== deadOwner || renewed)) {
      return { owner: q.leaseOwner, afterMs: Date.now() - since };
    }
    if (Date.now() > deadline) {
      throw new Error(`no runner took the lease of ${deadOwner} within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
