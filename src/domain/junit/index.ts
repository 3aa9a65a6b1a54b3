export { createJunitParser } from './parser.ts';
export type {
  AttemptOutcome,
  AttemptSource,
  AttemptWriter,
  JunitAttempt,
  JunitCounts,
  JunitFileSummary,
  JunitLimits,
  JunitParser,
  JunitParserOptions,
  JunitProblem,
} from './types.ts';
export { DEFAULT_JUNIT_LIMITS } from './types.ts';
