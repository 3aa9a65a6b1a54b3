// Status = the most severe active classifying monitor; the manual flag forces at least FLAKY.
// A transition is dated by the evidence behind it (see evaluate.ts), never before the previous
// transition and never after now.
import type { MonitorOutcome } from './outcome.ts';
import type { DetectionType } from './policy.ts';
import type { ManualFlag, StatusTransition, StatusValue, TestStatus, TransitionTrigger } from './snapshot.ts';

/** One candidate explanation of a status change. */
interface Cause {
  at: number;
  reason: string;
  trigger: TransitionTrigger;
}

const SEVERITY: Record<StatusValue, number> = { HEALTHY: 0, FLAKY: 1, BROKEN: 2 };
const STATUS_OF: Record<DetectionType, StatusValue> = { flaky: 'FLAKY', broken: 'BROKEN' };
export const NEW_TEST_REASON = 'No monitor has flagged this test';

/** The status the active monitors and the manual flag call for. */
export function statusValue(outcomes: readonly MonitorOutcome[], flag: ManualFlag | null): StatusValue {
  let value: StatusValue = flag?.flagged === true ? 'FLAKY' : 'HEALTHY';
  for (const { monitor, state } of outcomes) {
    const candidate = STATUS_OF[monitor.detectionType];
    if (state?.kind === 'active' && SEVERITY[candidate] > SEVERITY[value]) value = candidate;
  }
  return value;
}

/**
 * The new status and, when it changed, the transition to record. A new test starts HEALTHY as of
 * `firstSeen` (its earliest attempt), so that evidence found later can be dated before now.
 */
export function decideStatus(
  prev: TestStatus | null,
  outcomes: readonly MonitorOutcome[],
  flag: ManualFlag | null,
  times: { now: number; firstSeen: number },
): { status: TestStatus; transition: StatusTransition | null } {
  const { now, firstSeen } = times;
  const value = statusValue(outcomes, flag);
  if (prev !== null && prev.value === value) return { status: prev, transition: null };
  const from = prev?.value ?? 'HEALTHY';
  if (from === value)
    return { status: { value, reason: NEW_TEST_REASON, timestamp: firstSeen }, transition: null };
  const upgrade = SEVERITY[value] > SEVERITY[from];
  const cause = upgrade
    ? earliestContributor(value, outcomes, flag)
    : downgradeCause(from, outcomes, flag, now);
  const at = Math.min(now, Math.max(cause.at, prev?.timestamp ?? Number.NEGATIVE_INFINITY));
  const reason =
    upgrade || value === 'HEALTHY'
      ? cause.reason
      : `${cause.reason}; still ${value.toLowerCase()}: ${earliestContributor(value, outcomes, flag).reason}`;
  return {
    status: { value, reason, timestamp: at },
    transition: { from, to: value, at, reason, trigger: cause.trigger },
  };
}

/** Among what makes the status `value`, the one that took effect first. */
function earliestContributor(
  value: StatusValue,
  outcomes: readonly MonitorOutcome[],
  flag: ManualFlag | null,
): Cause {
  const causes: Cause[] = [];
  for (const { monitor, state } of outcomes) {
    if (state?.kind !== 'active' || STATUS_OF[monitor.detectionType] !== value) continue;
    const trigger: TransitionTrigger = {
      kind: 'monitor',
      monitorId: monitor.id,
      monitorType: monitor.type,
      monitorStatus: 'active',
    };
    causes.push({ at: state.since, reason: state.reason, trigger });
  }
  if (value === 'FLAKY' && flag?.flagged === true) causes.push(flagCause(flag));
  causes.sort((a, b) => a.at - b.at);
  return (
    causes[0] ?? { at: Number.NEGATIVE_INFINITY, reason: NEW_TEST_REASON, trigger: { kind: 'recomputed' } }
  );
}

/** Among what stopped holding the status `from`, the one that went away last. */
function downgradeCause(
  from: StatusValue,
  outcomes: readonly MonitorOutcome[],
  flag: ManualFlag | null,
  now: number,
): Cause {
  const causes: Cause[] = [];
  for (const { change } of outcomes) {
    if (change?.to !== 'resolved' || STATUS_OF[change.monitor.detectionType] !== from) continue;
    const { id, type } = change.monitor;
    const trigger: TransitionTrigger = {
      kind: 'monitor',
      monitorId: id,
      monitorType: type,
      monitorStatus: 'resolved',
    };
    causes.push({ at: change.at, reason: change.reason, trigger });
  }
  if (from === 'FLAKY' && flag !== null && !flag.flagged) causes.push(flagCause(flag));
  causes.sort((a, b) => b.at - a.at);
  return (
    causes[0] ?? { at: now, reason: 'No monitor flags this test any more', trigger: { kind: 'recomputed' } }
  );
}

function flagCause(flag: ManualFlag): Cause {
  const by = flag.by === undefined ? '' : ` by ${flag.by}`;
  const trigger: TransitionTrigger = { kind: 'manual_flag', flagged: flag.flagged, by: flag.by ?? null };
  if (!flag.flagged) return { at: flag.at, reason: `Flaky flag removed${by}`, trigger };
  const why = flag.reason === undefined || flag.reason === '' ? '' : `: ${flag.reason}`;
  return { at: flag.at, reason: `Manually flagged as flaky${by}${why}`, trigger };
}
