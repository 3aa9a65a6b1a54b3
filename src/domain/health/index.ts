export { branchMatcher, matchesAnyBranch, matchesBranchPattern } from './branch-glob.ts';
export { evaluateHealth } from './evaluate.ts';
export type { RetryEvent } from './pass-on-retry.ts';
export { passOnRetryEvents } from './pass-on-retry.ts';
export type {
  DetectionPolicy,
  DetectionType,
  FailureCountMonitorConfig,
  FailureCountMonitorInput,
  FailureRateMonitorConfig,
  FailureRateMonitorInput,
  MonitorType,
  PassOnRetryConfig,
} from './policy.ts';
export {
  DAY_MS,
  DEFAULT_BROKEN_MONITOR_ID,
  defaultBrokenMonitor,
  defaultPolicy,
  failureCountMonitor,
  failureRateMonitor,
  HOUR_MS,
  historyWindowMs,
  newRepositoryPolicy,
  PASS_ON_RETRY_ID,
  passesCanActivate,
  RETRY_PAIRING_MS,
} from './policy.ts';
export type {
  QuarantineDecision,
  QuarantineInput,
  QuarantineOverride,
  QuarantineSettings,
} from './quarantine.ts';
export { quarantineDecision } from './quarantine.ts';
export { failureRate, pullRequestsImpacted } from './rollups.ts';
export type {
  Attempt,
  HealthEvaluation,
  HealthSnapshot,
  ManualFlag,
  MonitorChange,
  MonitorRef,
  MonitorState,
  Outcome,
  StatusTransition,
  StatusValue,
  TestStatus,
  TransitionTrigger,
} from './snapshot.ts';
export { NEW_TEST_REASON, statusValue } from './status.ts';
export type { PolicyProblem } from './validate-policy.ts';
export { validatePolicy } from './validate-policy.ts';
