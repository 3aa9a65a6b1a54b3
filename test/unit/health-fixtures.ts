// Factories for the health tests: every default is a healthy, uneventful value.
import type {
  Attempt,
  DetectionPolicy,
  FailureCountMonitorInput,
  FailureRateMonitorInput,
  HealthEvaluation,
  HealthSnapshot,
  ManualFlag,
} from '../../src/domain/health/index.ts';
import {
  DAY_MS,
  defaultPolicy,
  evaluateHealth,
  failureCountMonitor,
  failureRateMonitor,
  HOUR_MS,
} from '../../src/domain/health/index.ts';

export const MINUTE = 60_000;
export const HOUR = HOUR_MS;
export const DAY = DAY_MS;
/** Monday 5 January 2026, 12:00 UTC. */
export const T0 = Date.UTC(2026, 0, 5, 12);

let shaCounter = 0;
/** A fresh 40-character commit sha, different on every call. */
export function newSha(): string {
  shaCounter++;
  return shaCounter.toString(16).padStart(7, '0').padEnd(40, 'f');
}

export function attempt(overrides: Partial<Attempt> = {}): Attempt {
  return {
    at: T0,
    branch: 'main',
    commitSha: newSha(),
    prNumber: null,
    outcome: 'passed',
    uploadId: 'upload-1',
    retryIndex: 0,
    ...overrides,
  };
}

/** `count` attempts one minute apart from `from`, each on its own commit. */
export function runs(count: number, overrides: Partial<Attempt> & { from: number }): Attempt[] {
  const { from, ...rest } = overrides;
  return Array.from({ length: count }, (_, i) => attempt({ ...rest, at: from + i * MINUTE }));
}

export function snapshot(overrides: Partial<HealthSnapshot> = {}): HealthSnapshot {
  return { attempts: [], monitors: {}, manualFlag: null, status: null, ...overrides };
}

/** The default policy with pass-on-retry switched off, plus the given overrides. */
export function policyWithout(overrides: Partial<DetectionPolicy> = {}): DetectionPolicy {
  const base = defaultPolicy();
  return { ...base, passOnRetry: { ...base.passOnRetry, enabled: false }, ...overrides };
}

export function rateMonitor(overrides: Partial<FailureRateMonitorInput> = {}) {
  return failureRateMonitor({
    id: 'broken-main',
    name: 'Broken on main',
    detectionType: 'broken',
    activationThreshold: 0.8,
    windowHours: 6,
    minSampleSize: 10,
    branches: ['main'],
    ...overrides,
  });
}

export function countMonitor(overrides: Partial<FailureCountMonitorInput> = {}) {
  return failureCountMonitor({
    id: 'count-main',
    name: 'Failing on main',
    detectionType: 'broken',
    failureCount: 3,
    windowHours: 0.5,
    resolutionTimeoutHours: 24,
    branches: ['main'],
    ...overrides,
  });
}

export function flag(overrides: Partial<ManualFlag> = {}): ManualFlag {
  return { flagged: true, by: 'alice', reason: 'times out on CI', at: T0, ...overrides };
}

export interface Step {
  add?: Attempt[];
  manualFlag?: ManualFlag | null;
  policy?: DetectionPolicy;
}

/**
 * A test case's life: each step adds attempts (or changes the flag or policy), evaluates at `now`
 * and stores the result, as the ingest and the periodic pass would.
 */
export function timeline(policy: DetectionPolicy, initial: Partial<HealthSnapshot> = {}) {
  let current = snapshot(initial);
  let currentPolicy = policy;
  return {
    at(now: number, step: Step = {}): HealthEvaluation {
      if (step.policy !== undefined) currentPolicy = step.policy;
      const manualFlag = step.manualFlag === undefined ? current.manualFlag : step.manualFlag;
      current = { ...current, manualFlag, attempts: [...current.attempts, ...(step.add ?? [])] };
      const result = evaluateHealth(current, currentPolicy, now);
      current = { ...current, monitors: result.monitors, status: result.status };
      return result;
    },
    get snapshot(): HealthSnapshot {
      return current;
    },
  };
}
