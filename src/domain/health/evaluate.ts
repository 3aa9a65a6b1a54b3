// evaluateHealth: one pure recompute of a test's monitors and status from its recent attempts.
//
// Use it after an upload for the tests it touched, and from a periodic pass for time-based
// resolution (recovery days, stale timeout, failure-count resolution timeout). Attempts may arrive
// late or out of order: the monitors look at run times, not arrival order.
//
// Timestamps (status.timestamp, transition.at, monitor `since`/`resolvedAt`):
// - pass-on-retry activates at the run that completed the fail+pass pair on one commit, and
//   resolves exactly `recoveryDays` after the last such event;
// - failure count activates at the failure that reached the count, and resolves exactly
//   `resolutionTimeoutHours` after the last failure;
// - failure rate activates and resolves at `now` (the rate is over the window ending now); the
//   stale timeout resolves at the last run plus the timeout;
// - disabling or deleting a monitor resolves it at `now`; the manual flag acts at its own `at`.
// All are clamped to be no earlier than the previous transition and no later than `now`.
import { evaluateFailureCount, failureCountRef } from './failure-count.ts';
import { evaluateFailureRate, failureRateRef } from './failure-rate.ts';
import type { MonitorOutcome } from './outcome.ts';
import { resolve, unchanged } from './outcome.ts';
import { evaluatePassOnRetry, PASS_ON_RETRY_REF } from './pass-on-retry.ts';
import type { DetectionPolicy } from './policy.ts';
import { PASS_ON_RETRY_ID } from './policy.ts';
import type { HealthEvaluation, HealthSnapshot, MonitorRef, MonitorState } from './snapshot.ts';
import { decideStatus } from './status.ts';

/** Recomputes the test's monitor states and status as of `now`. Same input, same output. */
export function evaluateHealth(
  snapshot: HealthSnapshot,
  policy: DetectionPolicy,
  now: number,
): HealthEvaluation {
  const outcomes = monitorOutcomes(snapshot, policy, now);
  const monitors: Record<string, MonitorState> = {};
  for (const { monitor, state } of outcomes) {
    if (state !== undefined) monitors[monitor.id] = state;
  }
  const monitorChanges = outcomes.flatMap(({ change }) => (change === null ? [] : [change]));
  const firstSeen = snapshot.attempts.reduce((earliest, { at }) => Math.min(earliest, at), now);
  const { status, transition } = decideStatus(snapshot.status, outcomes, snapshot.manualFlag, {
    now,
    firstSeen,
  });
  return { monitors, status, transition, monitorChanges };
}

function monitorOutcomes(snapshot: HealthSnapshot, policy: DetectionPolicy, now: number): MonitorOutcome[] {
  const { attempts, monitors: prev } = snapshot;
  const passOnRetry = policy.passOnRetry;
  const outcomes: MonitorOutcome[] = [
    passOnRetry.enabled
      ? evaluatePassOnRetry(passOnRetry, prev[PASS_ON_RETRY_ID], attempts, now)
      : disabled(
          PASS_ON_RETRY_REF,
          prev[PASS_ON_RETRY_ID],
          now,
          'Resolved: the pass-on-retry monitor was disabled',
        ),
  ];
  // A user-defined monitor that was turned off resolves, saying which one.
  const disabledCustom = (config: { id: string; name: string }, ref: MonitorRef) =>
    disabled(ref, prev[config.id], now, `Resolved: monitor ${config.name} was disabled`);
  for (const config of policy.failureRateMonitors) {
    outcomes.push(
      config.enabled
        ? evaluateFailureRate(config, prev[config.id], attempts, now)
        : disabledCustom(config, failureRateRef(config)),
    );
  }
  for (const config of policy.failureCountMonitors) {
    outcomes.push(
      config.enabled
        ? evaluateFailureCount(config, prev[config.id], attempts, now)
        : disabledCustom(config, failureCountRef(config)),
    );
  }
  const known = new Set(outcomes.map(({ monitor }) => monitor.id));
  for (const [id, state] of Object.entries(prev)) {
    if (!known.has(id)) outcomes.push(deleted(id, state, now));
  }
  return outcomes;
}

/** A disabled monitor resolves at once and then keeps its resolved state. */
function disabled(
  ref: MonitorRef,
  prev: MonitorState | undefined,
  now: number,
  reason: string,
): MonitorOutcome {
  return prev?.kind === 'active' ? resolve(ref, prev, now, now, reason) : unchanged(ref, prev);
}

/** A monitor no longer in the policy resolves at once; its state is dropped. */
function deleted(id: string, prev: MonitorState, now: number): MonitorOutcome {
  const ref: MonitorRef = { id, type: prev.monitorType, detectionType: prev.detectionType };
  if (prev.kind !== 'active') return { monitor: ref, state: undefined, change: null };
  const { change } = resolve(ref, prev, now, now, 'Resolved: the monitor that flagged this test was removed');
  return { monitor: ref, state: undefined, change };
}
