// Pass-on-retry: a failure and a pass on the same commit, in any order and however late the
// second one arrives. All retries of one commit make one event.

import { Lru } from '../../lib/lru.ts';
import { branchMatcher } from './branch-glob.ts';
import type { EpisodeWording } from './episode-monitor.ts';
import { evaluateEpisodes } from './episode-monitor.ts';
import type { MonitorOutcome } from './outcome.ts';
import type { PassOnRetryConfig } from './policy.ts';
import { DAY_MS, PASS_ON_RETRY_ID } from './policy.ts';
import type { Attempt, MonitorRef, MonitorState } from './snapshot.ts';
import { branchOfRun, duration, shortSha } from './wording.ts';

export const PASS_ON_RETRY_REF: MonitorRef = {
  id: PASS_ON_RETRY_ID,
  type: 'pass_on_retry',
  detectionType: 'flaky',
};

/** A commit with both outcomes; `at` is when the second outcome was first seen, and where. */
export interface RetryEvent {
  at: number;
  commitSha: string;
  branch: string;
  prNumber: number | null;
}

/** The pass-on-retry events among the attempts on the given branches, oldest first. */
export function passOnRetryEvents(attempts: readonly Attempt[], branches: readonly string[]): RetryEvent[] {
  const inScope = branchMatcher(branches);
  const bySha = new Map<string, { failed?: Attempt; passed?: Attempt }>();
  for (const attempt of attempts) {
    if (attempt.outcome === 'skipped' || attempt.commitSha === '' || !inScope(attempt.branch)) continue;
    const first = bySha.get(attempt.commitSha) ?? {};
    const earliest = first[attempt.outcome];
    if (earliest === undefined || attempt.at < earliest.at) first[attempt.outcome] = attempt;
    bySha.set(attempt.commitSha, first);
  }
  const events: RetryEvent[] = [];
  for (const { failed, passed } of bySha.values()) {
    if (failed === undefined || passed === undefined) continue;
    const second = passed.at >= failed.at ? passed : failed;
    events.push({
      at: second.at,
      commitSha: second.commitSha,
      branch: second.branch,
      prNumber: second.prNumber,
    });
  }
  return events.sort((a, b) => a.at - b.at || a.commitSha.localeCompare(b.commitSha));
}

/** Evaluates the pass-on-retry monitor (assumed enabled). */
export function evaluatePassOnRetry(
  config: PassOnRetryConfig,
  prev: MonitorState | undefined,
  attempts: readonly Attempt[],
  now: number,
): MonitorOutcome {
  const timeoutMs = config.recoveryDays * DAY_MS;
  const events = passOnRetryEvents(attempts, config.branches);
  const rules = { count: 1, windowMs: 1, timeoutMs };
  return evaluateEpisodes(PASS_ON_RETRY_REF, prev, { events, rules, now, wording: wordingFor(timeoutMs) });
}

function activated(event: RetryEvent | null): string {
  return event === null
    ? 'Failed and passed on the same commit'
    : `Failed and passed on the same commit ${shortSha(event.commitSha)} ${branchOfRun(event.branch, event.prNumber)}`;
}

/**
 * The wording for a recovery period: built once per period, not per test evaluated. Kept at module
 * level: a period always gets the same wording, and the bound keeps configured periods from growing it.
 */
const wordings = new Lru<EpisodeWording<RetryEvent>>(100);

function wordingFor(timeoutMs: number): EpisodeWording<RetryEvent> {
  const key = String(timeoutMs);
  let wording = wordings.get(key);
  if (wording === undefined) {
    wording = { activated, resolved: `Recovered: no pass-on-retry event for ${duration(timeoutMs)}` };
    wordings.set(key, wording);
  }
  return wording;
}
