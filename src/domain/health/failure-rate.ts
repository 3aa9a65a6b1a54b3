// Failure rate: runs on the scoped branches within the rolling window are pooled into one rate.
// Activates at rate ≥ activation threshold, resolves at rate < resolution threshold; in between
// (the hysteresis band) and below the minimum sample the state is kept. An optional stale timeout
// resolves an active monitor when the test has not run at all for that long.
import { branchMatcher } from './branch-glob.ts';
import type { MonitorOutcome } from './outcome.ts';
import { activate, activationTime, resolve, unchanged } from './outcome.ts';
import type { FailureRateMonitorConfig } from './policy.ts';
import { HOUR_MS } from './policy.ts';
import type { Attempt, MonitorRef, MonitorState } from './snapshot.ts';
import { branchScope, duration, percent } from './wording.ts';

/** The reference to a failure-rate monitor used in changes and transitions. */
export function failureRateRef(config: FailureRateMonitorConfig): MonitorRef {
  return { id: config.id, type: 'failure_rate', detectionType: config.detectionType };
}

interface WindowStats {
  runs: number;
  rate: number;
  /** The latest run on the scoped branches, in or before the window (−∞ when none). */
  lastRunAt: number;
}

/**
 * Evaluates one enabled failure-rate monitor. Its transitions are dated `now`: a rate over a window
 * ending now has no single run behind it.
 */
export function evaluateFailureRate(
  config: FailureRateMonitorConfig,
  prev: MonitorState | undefined,
  attempts: readonly Attempt[],
  now: number,
): MonitorOutcome {
  const ref = failureRateRef(config);
  const stats = windowStats(config, attempts, now);
  if (prev?.kind === 'active') {
    const stale = staleOutcome(config, ref, prev, stats, now);
    if (stale !== null) return stale;
  }
  if (stats.runs < config.minSampleSize) return keep(ref, prev, stats.lastRunAt);
  if (prev?.kind !== 'active' && stats.rate >= config.activationThreshold) {
    const reason = `Failure rate ${rateSentence(config, stats, '≥', config.activationThreshold)}`;
    return activate(ref, { since: activationTime(now, prev, now), lastEventAt: stats.lastRunAt }, reason);
  }
  if (prev?.kind === 'active' && stats.rate < config.resolutionThreshold) {
    const reason = `Resolved: failure rate ${rateSentence(config, stats, '<', config.resolutionThreshold)}`;
    return resolve(ref, prev, now, now, reason);
  }
  return keep(ref, prev, stats.lastRunAt);
}

function windowStats(
  config: FailureRateMonitorConfig,
  attempts: readonly Attempt[],
  now: number,
): WindowStats {
  const inScope = branchMatcher(config.branches);
  const windowStart = now - config.windowHours * HOUR_MS;
  let runs = 0;
  let failures = 0;
  let lastRunAt = Number.NEGATIVE_INFINITY;
  for (const attempt of attempts) {
    if (attempt.outcome === 'skipped' || !inScope(attempt.branch)) continue;
    lastRunAt = Math.max(lastRunAt, attempt.at);
    if (attempt.at <= windowStart) continue;
    runs++;
    if (attempt.outcome === 'failed') failures++;
  }
  return { runs, rate: runs === 0 ? 0 : failures / runs, lastRunAt };
}

/** Resolves the monitor when the test has not run on its branches for the stale timeout. */
function staleOutcome(
  config: FailureRateMonitorConfig,
  ref: MonitorRef,
  prev: Extract<MonitorState, { kind: 'active' }>,
  stats: WindowStats,
  now: number,
): MonitorOutcome | null {
  if (config.staleTimeoutHours === null) return null;
  const staleMs = config.staleTimeoutHours * HOUR_MS;
  const lastSeen = Math.max(prev.lastEventAt, stats.lastRunAt);
  if (now - lastSeen < staleMs) return null;
  const scope = branchScope(config.branches);
  const reason = `Resolved: no runs ${scope} for ${duration(staleMs)} (stale; monitor: ${config.name})`;
  return resolve(ref, prev, lastSeen + staleMs, now, reason);
}

/** `34% ≥ 30% over the last 6 h on main (120 runs; monitor: Flaky on main)`. */
function rateSentence(config: FailureRateMonitorConfig, stats: WindowStats, op: string, threshold: number) {
  const window = duration(config.windowHours * HOUR_MS);
  const scope = branchScope(config.branches);
  const detail = `${stats.runs} runs; monitor: ${config.name}`;
  return `${percent(stats.rate)} ${op} ${percent(threshold)} over the last ${window} ${scope} (${detail})`;
}

/** Keeps the state, remembering an active monitor's latest run for the stale timeout. */
function keep(ref: MonitorRef, prev: MonitorState | undefined, lastRunAt: number): MonitorOutcome {
  if (prev?.kind !== 'active') return unchanged(ref, prev);
  return unchanged(ref, { ...prev, lastEventAt: Math.max(prev.lastEventAt, lastRunAt) });
}
