// Reads of the operator's /metrics about merge queues: which organization, repository and branch a
// queue is (its labels), and every queue's live PRs and runs counted for the gauges.
import type { Queryable } from '../../db/bulk.ts';

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

/** A queue's names with its live PR entries counted by state and its runs under way. */
export interface QueueCensusRow extends QueueNames {
  readonly prs: ReadonlyMap<string, number>;
  readonly activeRuns: number;
}

/** Every queue with its counts, in a stable order: three statements whatever the number of queues. */
export async function queueCensus(db: Queryable): Promise<QueueCensusRow[]> {
  const queues = await named(db).orderBy('q.id').execute();
  const byState = await db
    .selectFrom('queue_prs')
    .select(['queue_id', 'state', (eb) => eb.fn.countAll().as('n')])
    .groupBy(['queue_id', 'state'])
    .execute();
  const active = await db
    .selectFrom('queue_runs')
    .select(['queue_id', (eb) => eb.fn.countAll().as('n')])
    .where('status', 'in', ['building', 'in_progress'])
    .groupBy('queue_id')
    .execute();
  const prs = new Map<string, Map<string, number>>();
  for (const r of byState) {
    let counts = prs.get(r.queue_id);
    if (counts === undefined) {
      counts = new Map();
      prs.set(r.queue_id, counts);
    }
    counts.set(r.state, Number(r.n));
  }
  const runs = new Map(active.map((r) => [r.queue_id, Number(r.n)]));
  return queues.map((q) => ({
    ...q,
    prs: prs.get(q.queue_id) ?? new Map(),
    activeRuns: runs.get(q.queue_id) ?? 0,
  }));
}
