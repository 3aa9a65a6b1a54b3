// Read-side figures of the API: failure_rate_last_7d / _24h and pull_requests_impacted_last_7d.
import type { Attempt } from './snapshot.ts';

/** The window (now − windowMs, now]. */
function inWindow(at: number, now: number, windowMs: number): boolean {
  return at > now - windowMs && at <= now;
}

/** The fraction (0–1) of non-skipped attempts in the window that failed; 0 when there were none. */
export function failureRate(
  attempts: readonly Pick<Attempt, 'at' | 'outcome'>[],
  now: number,
  windowMs: number,
): number {
  let runs = 0;
  let failures = 0;
  for (const { at, outcome } of attempts) {
    if (outcome === 'skipped' || !inWindow(at, now, windowMs)) continue;
    runs++;
    if (outcome === 'failed') failures++;
  }
  return runs === 0 ? 0 : failures / runs;
}

/** How many distinct pull requests had at least one failed attempt in the window. */
export function pullRequestsImpacted(
  attempts: readonly Pick<Attempt, 'at' | 'outcome' | 'prNumber'>[],
  now: number,
  windowMs: number,
): number {
  const prs = new Set<number>();
  for (const { at, outcome, prNumber } of attempts) {
    if (outcome === 'failed' && prNumber !== null && inWindow(at, now, windowMs)) prs.add(prNumber);
  }
  return prs.size;
}
