// A repository's detection policy: which monitors run, with which parameters (flaky.md §a.2).

/** What a monitor classifies a test as when it activates. */
export type DetectionType = 'flaky' | 'broken';

/** The three monitor kinds, named as in Trunk's webhook `monitor_type`. */
export type MonitorType = 'pass_on_retry' | 'failure_rate' | 'failure_count';

/** The fixed id of the single pass-on-retry monitor of a repository. */
export const PASS_ON_RETRY_ID = 'pass_on_retry';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/**
 * How far before a pass-on-retry event the other half of the pair may lie and still be loaded:
 * a CI job re-run days after the failure on the same commit is still detected.
 */
export const RETRY_PAIRING_MS = 14 * DAY_MS;

/** Flags a test that failed and passed on the same commit. */
export interface PassOnRetryConfig {
  enabled: boolean;
  /** Days without a new event before the monitor resolves (1–15). */
  recoveryDays: number;
  /** Branch globs whose runs count (see branch-glob.ts). */
  branches: string[];
}

/** Flags a test whose failure rate over a rolling window reaches a threshold. */
export interface FailureRateMonitorConfig {
  id: string;
  name: string;
  detectionType: DetectionType;
  /** Fraction 0–1; the monitor activates when the rate is at or above it. */
  activationThreshold: number;
  /** Fraction 0–1, at most the activation threshold; the monitor resolves when the rate drops below it. */
  resolutionThreshold: number;
  windowHours: number;
  /** Runs needed in the window before the monitor may activate or resolve. */
  minSampleSize: number;
  /** Hours without any run after which an active monitor resolves as stale; null = never. */
  staleTimeoutHours: number | null;
  branches: string[];
  enabled: boolean;
}

/** Flags a test that failed a number of times within a rolling window. */
export interface FailureCountMonitorConfig {
  id: string;
  name: string;
  detectionType: DetectionType;
  /** Failures within the window that activate the monitor (≥ 1). */
  failureCount: number;
  windowHours: number;
  /** Hours without a new failure before the monitor resolves; at least the window. */
  resolutionTimeoutHours: number;
  branches: string[];
  enabled: boolean;
}

export interface DetectionPolicy {
  passOnRetry: PassOnRetryConfig;
  failureRateMonitors: FailureRateMonitorConfig[];
  failureCountMonitors: FailureCountMonitorConfig[];
}

/** A failure-rate monitor as a client may send it: defaults fill the optional fields. */
export type FailureRateMonitorInput = Omit<
  FailureRateMonitorConfig,
  'resolutionThreshold' | 'staleTimeoutHours' | 'enabled'
> &
  Partial<Pick<FailureRateMonitorConfig, 'resolutionThreshold' | 'staleTimeoutHours' | 'enabled'>>;

/** A failure-count monitor as a client may send it: defaults fill the optional fields. */
export type FailureCountMonitorInput = Omit<FailureCountMonitorConfig, 'failureCount' | 'enabled'> &
  Partial<Pick<FailureCountMonitorConfig, 'failureCount' | 'enabled'>>;

/**
 * Pass-on-retry on all branches with 7 recovery days, nothing else: the policy of a repository
 * created before the default broken-test monitor existed (migration 0019 writes it for each of
 * them, so their detection does not change on upgrade). New repositories get `newRepositoryPolicy`.
 */
export function defaultPolicy(): DetectionPolicy {
  return {
    passOnRetry: { enabled: true, recoveryDays: 7, branches: ['*'] },
    failureRateMonitors: [],
    failureCountMonitors: [],
  };
}

/** The id of the broken-test monitor a new repository starts with. */
export const DEFAULT_BROKEN_MONITOR_ID = 'default-broken';

/**
 * The branches the default broken-test monitor counts: the usual default branches and the test
 * branches of merge queues (this server's own, Trunk's, GitHub's, Graphite's). Failures on pull
 * request branches are expected while a change is being written and do not count.
 */
export const STABLE_BRANCHES = [
  'main',
  'master',
  'mainline-merge/*',
  'trunk-merge/*',
  'gh-readonly-queue/*',
  'graphite-merge/*',
] as const;

/**
 * The broken-test monitor every new repository starts with: BROKEN after 4 failures within an hour
 * on a stable branch (STABLE_BRANCHES), resolved after 24 hours without one (docs/dashboard.md
 * "Broken tests by default" says why these numbers). Anchors: Trunk's failure-count monitor (count
 * 1 by default, off by default, meant for main, merge-queue and release branches) and Datadog's
 * "broken" (failed every run). One failure is what a flaky test does in a CI run before its retry
 * passes, and BROKEN outranks FLAKY (a BROKEN test is never auto-quarantined and fails a queue run
 * for real), so the count is the attempts of a CI run with three retries that all failed, or four
 * failed runs within the hour.
 */
export function defaultBrokenMonitor(): FailureCountMonitorConfig {
  return {
    id: DEFAULT_BROKEN_MONITOR_ID,
    name: 'Broken: 4 failures within an hour',
    detectionType: 'broken',
    failureCount: 4,
    windowHours: 1,
    resolutionTimeoutHours: 24,
    branches: [...STABLE_BRANCHES],
    enabled: true,
  };
}

/** The policy of a repository created now: `defaultPolicy` plus the default broken-test monitor. */
export function newRepositoryPolicy(): DetectionPolicy {
  return { ...defaultPolicy(), failureCountMonitors: [defaultBrokenMonitor()] };
}

/** Fills a failure-rate monitor's defaults: resolution = activation threshold, no stale timeout, enabled. */
export function failureRateMonitor(input: FailureRateMonitorInput): FailureRateMonitorConfig {
  return {
    ...input,
    resolutionThreshold: input.resolutionThreshold ?? input.activationThreshold,
    staleTimeoutHours: input.staleTimeoutHours ?? null,
    enabled: input.enabled ?? true,
  };
}

/** Fills a failure-count monitor's defaults: one failure, enabled. */
export function failureCountMonitor(input: FailureCountMonitorInput): FailureCountMonitorConfig {
  return { ...input, failureCount: input.failureCount ?? 1, enabled: input.enabled ?? true };
}

/**
 * How far back (ms before `now`) the store must load a test's attempts for `evaluateHealth`
 * to see every piece of evidence the enabled monitors use. At least one hour.
 */
export function historyWindowMs(policy: DetectionPolicy): number {
  const spans = [HOUR_MS];
  if (policy.passOnRetry.enabled) spans.push(policy.passOnRetry.recoveryDays * DAY_MS + RETRY_PAIRING_MS);
  for (const monitor of policy.failureRateMonitors) {
    if (!monitor.enabled) continue;
    spans.push(Math.max(monitor.windowHours, monitor.staleTimeoutHours ?? 0) * HOUR_MS);
  }
  for (const monitor of policy.failureCountMonitors) {
    if (!monitor.enabled) continue;
    spans.push((monitor.windowHours + monitor.resolutionTimeoutHours) * HOUR_MS);
  }
  return Math.max(...spans);
}

/**
 * Whether a passing attempt can change the health of a test that is HEALTHY with no active monitor,
 * no flag and no failure on the attempt's commit. Passes only lower failure rates and never add to
 * failure counts, so it can only when a failure-rate monitor activates at a 0 threshold (any test
 * with enough attempts). When false, an upload need not re-evaluate such tests.
 */
export function passesCanActivate(policy: DetectionPolicy): boolean {
  return policy.failureRateMonitors.some((m) => m.enabled && m.activationThreshold <= 0);
}
