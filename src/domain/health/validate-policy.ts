// Semantic checks of a detection policy; the HTTP layer turns the problems into a 400.
import type {
  DetectionPolicy,
  FailureCountMonitorConfig,
  FailureRateMonitorConfig,
  PassOnRetryConfig,
} from './policy.ts';
import { PASS_ON_RETRY_ID } from './policy.ts';

/** One thing wrong with one field; `path` is relative to the policy, e.g. `failureRateMonitors[0].windowHours`. */
export interface PolicyProblem {
  readonly path: string;
  /** What the field must be, in words. */
  readonly expected: string;
  /** The problem as one sentence naming the field. */
  readonly message: string;
}

export const MAX_BRANCH_PATTERNS = 10;
export const MAX_BRANCH_PATTERN_LENGTH = 255;

type Check = (path: string, expected: string, ok: boolean) => void;

/** Bounds that come from the installation, not from the policy itself. */
export interface PolicyLimits {
  /** Results are kept this many days (0: forever): a monitor's window cannot look further back. */
  readonly retentionDays: number;
}

/** Every problem with the policy; an empty list means it is valid. */
export function validatePolicy(policy: DetectionPolicy, limits?: PolicyLimits): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  const check: Check = (path, expected, ok) => {
    if (!ok) problems.push({ path, expected, message: `${path} must be ${expected}` });
  };
  checkPassOnRetry(policy.passOnRetry, check);
  policy.failureRateMonitors.forEach((monitor, i) => {
    checkFailureRate(monitor, `failureRateMonitors[${i}]`, check, limits);
  });
  policy.failureCountMonitors.forEach((monitor, i) => {
    checkFailureCount(monitor, `failureCountMonitors[${i}]`, check, limits);
  });
  checkUniqueIds(policy, check);
  return problems;
}

function checkPassOnRetry(config: PassOnRetryConfig, check: Check): void {
  const days = config.recoveryDays;
  check('passOnRetry.recoveryDays', 'a whole number of days from 1 to 15', isInteger(days, 1, 15));
  checkBranches(config.branches, 'passOnRetry.branches', check);
}

function checkFailureRate(
  monitor: FailureRateMonitorConfig,
  at: string,
  check: Check,
  limits: PolicyLimits | undefined,
): void {
  checkCommon(monitor, at, check, limits);
  const activation = monitor.activationThreshold;
  check(`${at}.activationThreshold`, 'a fraction greater than 0 and at most 1', isFraction(activation));
  check(
    `${at}.resolutionThreshold`,
    'a fraction greater than 0 and at most the activation threshold',
    isFraction(monitor.resolutionThreshold) && monitor.resolutionThreshold <= activation,
  );
  check(`${at}.minSampleSize`, 'a whole number of at least 1', isInteger(monitor.minSampleSize, 1));
  const stale = monitor.staleTimeoutHours;
  check(`${at}.staleTimeoutHours`, 'null or a positive number of hours', stale === null || isPositive(stale));
}

function checkFailureCount(
  monitor: FailureCountMonitorConfig,
  at: string,
  check: Check,
  limits: PolicyLimits | undefined,
): void {
  checkCommon(monitor, at, check, limits);
  check(`${at}.failureCount`, 'a whole number of at least 1', isInteger(monitor.failureCount, 1));
  check(
    `${at}.resolutionTimeoutHours`,
    'a number of hours at least as long as the window',
    isPositive(monitor.resolutionTimeoutHours) && monitor.resolutionTimeoutHours >= monitor.windowHours,
  );
}

function checkCommon(
  monitor: FailureRateMonitorConfig | FailureCountMonitorConfig,
  at: string,
  check: Check,
  limits: PolicyLimits | undefined,
) {
  check(`${at}.id`, 'a non-empty id', monitor.id.trim() !== '');
  check(`${at}.name`, 'a non-empty name', monitor.name.trim() !== '');
  const type = monitor.detectionType;
  check(`${at}.detectionType`, "'flaky' or 'broken'", type === 'flaky' || type === 'broken');
  const days = limits?.retentionDays ?? 0;
  const hours = monitor.windowHours;
  const kept = days === 0 ? Number.POSITIVE_INFINITY : days * 24;
  const expected =
    days === 0
      ? 'a positive number of hours'
      : `a positive number of hours up to ${kept} (results are kept ${days} days, MAINLINE_RETENTION_DAYS)`;
  check(`${at}.windowHours`, expected, isPositive(hours) && hours <= kept);
  checkBranches(monitor.branches, `${at}.branches`, check);
}

function checkBranches(branches: readonly string[], at: string, check: Check): void {
  const count = branches.length;
  check(
    at,
    `a list of 1 to ${MAX_BRANCH_PATTERNS} branch patterns`,
    count >= 1 && count <= MAX_BRANCH_PATTERNS,
  );
  branches.forEach((pattern, i) => {
    const ok = pattern.trim() !== '' && pattern.length <= MAX_BRANCH_PATTERN_LENGTH;
    check(`${at}[${i}]`, `a non-empty pattern of at most ${MAX_BRANCH_PATTERN_LENGTH} characters`, ok);
  });
}

function checkUniqueIds(policy: DetectionPolicy, check: Check): void {
  const seen = new Set<string>([PASS_ON_RETRY_ID]);
  const entries = [
    ...policy.failureRateMonitors.map((m, i) => ({ id: m.id, path: `failureRateMonitors[${i}].id` })),
    ...policy.failureCountMonitors.map((m, i) => ({ id: m.id, path: `failureCountMonitors[${i}].id` })),
  ];
  for (const { id, path } of entries) {
    check(path, `an id used by no other monitor (nor '${PASS_ON_RETRY_ID}')`, !seen.has(id));
    seen.add(id);
  }
}

function isInteger(value: number, min: number, max = Number.MAX_SAFE_INTEGER): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

function isPositive(value: number): boolean {
  return Number.isFinite(value) && value > 0;
}

function isFraction(value: number): boolean {
  return Number.isFinite(value) && value > 0 && value <= 1;
}
