import type { Queryable } from '../../db/bulk.ts';
import type { QueueState } from '../../domain/queue/index.ts';
import { finishedPrs, mergedSha } from '../../domain/webhooks.ts';
import type { QueueRow } from '../../store/queue/queues.ts';
import type { EndpointPresence } from './endpoints.ts';
import { enqueueRepositoryEvents } from './enqueue.ts';

/**
 * Enqueues pull_request.merged / pull_request.failed for the PRs one engine step finished: `row` and
 * `before` are the queue as read before the step, `after` the stepped state (before pruning moves finished PRs to
 * the archive). No query unless a PR finished, nor when `presence` (given only where it can be
 * trusted: app/queue/apply.ts) knows the organization has no endpoint; a lookup tells it what it found.
 */
export async function enqueueQueueEvents(
  trx: Queryable,
  row: QueueRow,
  before: QueueState,
  after: QueueState,
  now: number,
  presence?: EndpointPresence,
): Promise<void> {
  const finished = finishedPrs(after, now, () => before);
  if (finished.length === 0) return;
  if (presence?.of(row.repo_id) === false) return;
  const generation = presence?.generation ?? 0;
  await enqueueRepositoryEvents(
    trx,
    row.repo_id,
    (repository) =>
      finished.map((e) => ({
        type: e.state === 'merged' ? ('pull_request.merged' as const) : ('pull_request.failed' as const),
        data: {
          repository: { host: repository.host, owner: repository.owner, name: repository.name },
          queue: { branch: after.branch },
          pull_request: {
            number: e.number,
            title: e.title,
            author: e.author,
            head_sha: e.headSha,
            submission_id: e.id,
          },
          state: e.state,
          reason: e.reason,
          merged_sha: e.state === 'merged' ? mergedSha(after, e.number) : null,
          changed_at: new Date(e.stateChangedAt).toISOString(),
        },
      })),
    now,
    presence && ((present) => presence.learn(row.repo_id, present, generation)),
  );
}
