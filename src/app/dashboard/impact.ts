import type { QueueState } from '../../domain/queue/index.ts';
import type { AppContext } from '../context.ts';
import { timeDays } from './durations.ts';
import { queueDayCharts } from './queue-charts.ts';

/** Days the overview's and the repository page's impact figures cover, today included. */
export const IMPACT_DAYS = 7;

/**
 * What flaky tests cost a repository over IMPACT_DAYS UTC days (docs/dashboard.md, "Impact"): failed
 * attempts of tests that passed on a retry in the same upload and their summed durations (CI time
 * lost), from repo_time_days; and merge-queue test runs that failed on flaky tests, which flake
 * protection retried or let through as quarantined (so held up the PRs in them), from the queue
 * charts' hours.
 */
export interface Impact {
  readonly retriedFailures: number;
  readonly retriedMs: number;
  readonly flakyRuns: number;
}

export async function repoImpact(
  ctx: AppContext,
  repoId: string,
  queues: readonly { readonly id: string; readonly state: QueueState }[],
): Promise<Impact> {
  const days = await timeDays(ctx, repoId, IMPACT_DAYS);
  let flakyRuns = 0;
  for (const q of queues) {
    const charts = await queueDayCharts(ctx, q.id, q.state, ctx.now(), IMPACT_DAYS);
    flakyRuns += charts.flaky.reduce((a, b) => a + b, 0);
  }
  return {
    retriedFailures: days.reduce((a, d) => a + d.retriedFailures, 0),
    retriedMs: days.reduce((a, d) => a + d.retriedMs, 0),
    flakyRuns,
  };
}
