// How one monitor's evaluation ends: its new state and, if it flipped, the change.
import type { MonitorChange, MonitorRef, MonitorState } from './snapshot.ts';

export interface MonitorOutcome {
  monitor: MonitorRef;
  /** Undefined when the monitor keeps no state for the test (never active, or deleted). */
  state: MonitorState | undefined;
  change: MonitorChange | null;
}

/** The monitor keeps its previous state. */
export function unchanged(monitor: MonitorRef, prev: MonitorState | undefined): MonitorOutcome {
  return { monitor, state: prev, change: null };
}

/** The monitor flags the test from `since`, with `lastEventAt` as its latest evidence. */
export function activate(
  monitor: MonitorRef,
  evidence: { since: number; lastEventAt: number },
  reason: string,
): MonitorOutcome {
  const state: MonitorState = {
    kind: 'active',
    monitorType: monitor.type,
    detectionType: monitor.detectionType,
    since: evidence.since,
    lastEventAt: evidence.lastEventAt,
    reason,
  };
  return { monitor, state, change: { monitor, to: 'active', at: evidence.since, reason } };
}

/** The active monitor resolves at `at` (clamped between its activation and now). */
export function resolve(
  monitor: MonitorRef,
  prev: Extract<MonitorState, { kind: 'active' }>,
  at: number,
  now: number,
  reason: string,
): MonitorOutcome {
  const resolvedAt = Math.min(now, Math.max(prev.since, at));
  const state: MonitorState = { ...prev, kind: 'resolved', resolvedAt, reason };
  return { monitor, state, change: { monitor, to: 'resolved', at: resolvedAt, reason } };
}

/** The earliest time a monitor may (re)activate: not before it last resolved, never after now. */
export function activationTime(evidenceAt: number, prev: MonitorState | undefined, now: number): number {
  const notBefore = prev?.kind === 'resolved' ? prev.resolvedAt : Number.NEGATIVE_INFINITY;
  return Math.min(now, Math.max(evidenceAt, notBefore));
}
