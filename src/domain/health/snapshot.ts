// What evaluateHealth reads about one test case and what it returns.
import type { DetectionType, MonitorType } from './policy.ts';

export type Outcome = 'passed' | 'failed' | 'skipped';

/** One execution of the test, as uploaded. Retries inside one upload are separate attempts. */
export interface Attempt {
  /** When it ran (epoch ms): the testcase/suite timestamp, else the upload time. */
  at: number;
  branch: string;
  commitSha: string;
  prNumber: number | null;
  outcome: Outcome;
  uploadId: string;
  /** 0 for the first attempt in an upload, 1 for its first retry, … */
  retryIndex: number;
}

export type StatusValue = 'HEALTHY' | 'FLAKY' | 'BROKEN';

/** The test's status as the API shows it. */
export interface TestStatus {
  value: StatusValue;
  /** Why the status is what it is, in words a user understands. */
  reason: string;
  /** When the status last changed (epoch ms). */
  timestamp: number;
}

/** What every monitor state records about the monitor, so a deleted monitor can still be resolved. */
interface MonitorStateBase {
  monitorType: MonitorType;
  detectionType: DetectionType;
  /** When the monitor (last) activated for this test. */
  since: number;
  /** The latest evidence seen while active: event, failure or run time. */
  lastEventAt: number;
  /** The activation reason while active; the resolution reason once resolved. */
  reason: string;
}

/** One monitor's memory for one test. A monitor that never activated for the test has no state. */
export type MonitorState =
  /** The monitor has flagged the test since `since` and not resolved yet. */
  | (MonitorStateBase & { kind: 'active' })
  /** The monitor flagged the test from `since` and resolved at `resolvedAt`. */
  | (MonitorStateBase & { kind: 'resolved'; resolvedAt: number });

/** The manual "Flag as flaky" switch; `at` is when it was last set or cleared. */
export interface ManualFlag {
  flagged: boolean;
  by?: string;
  reason?: string;
  at: number;
}

/** Everything the evaluation needs about one test case. */
export interface HealthSnapshot {
  /** Attempts within `historyWindowMs(policy)` before now, in any order. */
  attempts: readonly Attempt[];
  /** Previous monitor states by monitor id. */
  monitors: Readonly<Record<string, MonitorState>>;
  manualFlag: ManualFlag | null;
  /** The stored status; null for a test seen for the first time. */
  status: TestStatus | null;
}

/** The monitor behind a state or a change. */
export interface MonitorRef {
  id: string;
  type: MonitorType;
  detectionType: DetectionType;
}

/** A monitor activating or resolving for this test during one evaluation. */
export interface MonitorChange {
  monitor: MonitorRef;
  to: 'active' | 'resolved';
  at: number;
  reason: string;
}

/** What made the status change. */
export type TransitionTrigger =
  /** A monitor activated or resolved. */
  | { kind: 'monitor'; monitorId: string; monitorType: MonitorType; monitorStatus: 'active' | 'resolved' }
  /** Someone flagged the test as flaky or removed the flag. */
  | { kind: 'manual_flag'; flagged: boolean; by: string | null }
  /** The stored status disagreed with the monitors and no single change explains it. */
  | { kind: 'recomputed' };

export interface StatusTransition {
  from: StatusValue;
  to: StatusValue;
  at: number;
  reason: string;
  trigger: TransitionTrigger;
}

export interface HealthEvaluation {
  /** The new monitor states by id, to store in place of the previous ones. */
  monitors: Record<string, MonitorState>;
  status: TestStatus;
  /** Present when the status changed; append it to the test's history. */
  transition: StatusTransition | null;
  /** Every monitor that activated or resolved, for monitor-status events. */
  monitorChanges: MonitorChange[];
}
