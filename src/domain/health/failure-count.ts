// Failure count: `failureCount` failures within the window activate the monitor; it resolves after
// `resolutionTimeoutHours` without a new failure (each failure resets that clock).
import { branchMatcher } from './branch-glob.ts';
import { evaluateEpisodes } from './episode-monitor.ts';
import type { MonitorOutcome } from './outcome.ts';
import type { FailureCountMonitorConfig } from './policy.ts';
import { HOUR_MS } from './policy.ts';
import type { Attempt, MonitorRef, MonitorState } from './snapshot.ts';
import { branchScope, duration, plural } from './wording.ts';

/** The reference to a failure-count monitor used in changes and transitions. */
export function failureCountRef(config: FailureCountMonitorConfig): MonitorRef {
  return { id: config.id, type: 'failure_count', detectionType: config.detectionType };
}

/** Evaluates one enabled failure-count monitor. */
export function evaluateFailureCount(
  config: FailureCountMonitorConfig,
  prev: MonitorState | undefined,
  attempts: readonly Attempt[],
  now: number,
): MonitorOutcome {
  const inScope = branchMatcher(config.branches);
  const events = attempts
    .filter((attempt) => attempt.outcome === 'failed' && inScope(attempt.branch))
    .sort((a, b) => a.at - b.at);
  const rules = {
    count: config.failureCount,
    windowMs: config.windowHours * HOUR_MS,
    timeoutMs: config.resolutionTimeoutHours * HOUR_MS,
  };
  const scope = branchScope(config.branches);
  const wording = {
    activated: () =>
      `${failuresPhrase(config.failureCount, rules.windowMs)} ${scope} (monitor: ${config.name})`,
    resolved: `Resolved: no failure ${scope} for ${duration(rules.timeoutMs)} (monitor: ${config.name})`,
  };
  return evaluateEpisodes(failureCountRef(config), prev, { events, rules, now, wording });
}

/** `1 failure`, or `3 failures within 30 min`. */
function failuresPhrase(count: number, windowMs: number): string {
  return count === 1 ? '1 failure' : `${plural(count, 'failure')} within ${duration(windowMs)}`;
}
