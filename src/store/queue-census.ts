// Reads of the operator's /metrics about merge queues: which organization, repository and branch a
// queue is (its labels), and every queue's state for the gauges.
import type { Queryable } from './db.ts';

export interface QueueNames {
  readonly queue_id: string;
  readonly org_slug: string;
  readonly host: string;
  readonly owner: string;
  readonly name: string;
  readonly branch: string;
}

function named(db: Queryable) {
  return db
    .selectFrom('merge_queues as q')
    .innerJoin('repositories as r', 'r.id', 'q.repo_id')
    .innerJoin('organizations as o', 'o.id', 'r.org_id')
    .select(['q.id as queue_id', 'o.slug as org_slug', 'r.host', 'r.owner', 'r.name', 'q.branch']);
}

/** The organization, repository and branch of one queue; undefined once it is deleted. */
export function queueNames(db: Queryable, queueId: string): Promise<QueueNames | undefined> {
  return named(db).where('q.id', '=', queueId).executeTakeFirst();
}

/** Every queue with its names and its state (JSON), in a stable order. */
export function queueStates(db: Queryable): Promise<(QueueNames & { state: string })[]> {
  return named(db).select('q.state').orderBy('q.id').execute();
}
