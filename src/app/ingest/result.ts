import type { JunitCounts } from '../../domain/junit/index.ts';
import type { Repository } from '../repositories.ts';
import type { IdentifiedAttempt, ParsedFile } from './prepare/types.ts';

/** At most this many failed tests are listed in an upload's answer. */
export const FAILED_TESTS_SHOWN = 1000;

interface Counts {
  test_cases: number;
  attempts: number;
  failures: number;
  retries: number;
  skipped: number;
}

export interface FailedTest {
  test_case_id: string;
  name: string;
  parent: string | null;
  classname: string | null;
  file: string | null;
  quarantined: boolean;
}

/** The answer to an upload (docs/upload-contract.md). */
export interface UploadResult {
  upload_id: string;
  duplicate: boolean;
  repo: { host: string; owner: string; name: string };
  counts: Counts & { files: number };
  files: { name: string; ok: boolean; counts: Counts; problems: ParsedFile['summary']['problems'] }[];
  failed_tests: FailedTest[];
  failed_tests_truncated: boolean;
  all_failures_quarantined: boolean;
  /**
   * What is wrong with the upload as a whole (absent when nothing is): the problems of a bundle
   * (entries skipped, files missing) as warnings, and an error when it stored no test at all.
   */
  problems?: ParsedFile['summary']['problems'];
}

/** The upload's error when it holds no test: never a silent success. */
export const NO_TESTS_PROBLEM =
  'No test results were stored: the upload holds no test case (see each file’s problems). Check that the test runner wrote its report before the upload, and the paths given to the uploader';

function fileCounts(c: JunitCounts): Counts {
  return {
    test_cases: c.testcases,
    attempts: c.attempts,
    failures: c.failures,
    retries: c.retries,
    skipped: c.skipped,
  };
}

/**
 * Tests whose last attempt in this upload failed: a failure retried into a pass is not a failure.
 * Only tests with a failed attempt are followed (a few among 100k).
 */
function lastFailures(attempts: readonly IdentifiedAttempt[]): IdentifiedAttempt[] {
  const failedOnce = new Set<string>();
  for (const x of attempts) if (x.attempt.outcome === 'failed') failedOnce.add(x.testId);
  if (failedOnce.size === 0) return [];
  const last = new Map<string, IdentifiedAttempt>();
  for (const x of attempts)
    if (x.attempt.outcome !== 'skipped' && failedOnce.has(x.testId)) last.set(x.testId, x);
  return [...last.values()].filter((x) => x.attempt.outcome === 'failed');
}

export function buildResult(input: {
  uploadId: string;
  repository: Repository;
  files: readonly ParsedFile[];
  attempts: readonly IdentifiedAttempt[];
  /** Distinct tests of the upload. */
  tests: number;
  /** Problems of the upload as a whole, answered as warnings. */
  notes?: readonly string[];
  /** Whether a test is quarantined after the upload. */
  isQuarantined: (testId: string) => boolean;
}): UploadResult {
  const files = input.files.map((f) => ({
    name: f.name,
    ok: f.summary.ok,
    counts: fileCounts(f.summary.counts),
    problems: f.summary.problems,
  }));
  const sum = (k: keyof Counts) => files.reduce((n, f) => n + f.counts[k], 0);
  const failed = lastFailures(input.attempts).map((x) => ({
    test_case_id: x.testId,
    name: x.attempt.name,
    parent: x.attempt.parent,
    classname: x.attempt.classname,
    file: x.attempt.file,
    quarantined: input.isQuarantined(x.testId),
  }));
  const { host, owner, name } = input.repository;
  const problems: NonNullable<UploadResult['problems']> = (input.notes ?? []).map((message) => ({
    severity: 'warning',
    message,
  }));
  if (input.tests === 0) problems.push({ severity: 'error', message: NO_TESTS_PROBLEM });
  return {
    upload_id: input.uploadId,
    duplicate: false,
    repo: { host, owner, name },
    counts: {
      files: files.length,
      test_cases: input.tests,
      attempts: sum('attempts'),
      failures: sum('failures'),
      retries: sum('retries'),
      skipped: sum('skipped'),
    },
    files,
    failed_tests: failed.slice(0, FAILED_TESTS_SHOWN),
    failed_tests_truncated: failed.length > FAILED_TESTS_SHOWN,
    all_failures_quarantined: failed.length > 0 && failed.every((f) => f.quarantined),
    ...(problems.length === 0 ? {} : { problems }),
  };
}
