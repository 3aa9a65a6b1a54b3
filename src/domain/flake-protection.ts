/**
 * Flake-aware judgement of a failed merge-queue test run (a Mainline extension): the run is judged by
 * the tests that actually failed in the results uploaded for its commit, not only by its red status.
 */

/** The queue's setting: off (a red status fails the run), ignore_quarantined, or retry_flaky. */
export type FlakeProtection = 'off' | 'ignore_quarantined' | 'retry_flaky';

/** One test of the run's uploaded results, with its health at the moment of judging. */
export interface JudgedTest {
  readonly testCaseId: string;
  readonly name: string;
  /** Its last attempt in the run failed (a failure retried into a pass is not a failure). */
  readonly failed: boolean;
  readonly quarantined: boolean;
  /** HEALTHY | FLAKY | BROKEN */
  readonly status: string;
}

export type RunJudgement =
  /** Protection is off: the red status decides, as without Mainline's test data. */
  | { kind: 'off' }
  /** No results were uploaded for the run: nothing to judge by, a real failure. */
  | { kind: 'no_results'; reason: string }
  /** Every failure is in a quarantined test: the run counts as passed. */
  | { kind: 'ignore'; reason: string; tests: JudgedTest[] }
  /** Every failure is in a FLAKY (or quarantined) test and no retry was spent: run it again on the same base. */
  | { kind: 'retry'; reason: string; tests: JudgedTest[] }
  /** A failure in a healthy or broken test, no test failure at all, or the retry already spent. */
  | { kind: 'real_failure'; reason: string; tests: JudgedTest[] };

const names = (tests: readonly JudgedTest[]) => {
  const shown = tests.slice(0, 5).map((t) => t.name);
  return tests.length > 5 ? `${shown.join(', ')} and ${tests.length - 5} more` : shown.join(', ');
};

/** Decides what a failed run's required status means, given its uploaded test results. */
export function judgeFailedRun(input: {
  mode: FlakeProtection;
  uploads: number;
  tests: readonly JudgedTest[];
  retriesSpent: number;
}): RunJudgement {
  if (input.mode === 'off') return { kind: 'off' };
  if (input.uploads === 0) {
    return {
      kind: 'no_results',
      reason: 'a required status failed and no test results were uploaded for the run',
    };
  }
  const failing = input.tests.filter((t) => t.failed);
  if (failing.length === 0) {
    return {
      kind: 'real_failure',
      reason: 'a required status failed but no uploaded test failed (a build or setup failure)',
      tests: [],
    };
  }
  if (failing.every((t) => t.quarantined)) {
    return {
      kind: 'ignore',
      reason: `merged despite a failing status: only quarantined tests failed (${names(failing)})`,
      tests: failing,
    };
  }
  const flakyOnly = failing.every((t) => t.quarantined || t.status === 'FLAKY');
  if (input.mode === 'retry_flaky' && flakyOnly) {
    if (input.retriesSpent < 1) {
      return {
        kind: 'retry',
        reason: `retrying once: only flaky tests failed (${names(failing)})`,
        tests: failing,
      };
    }
    return {
      kind: 'real_failure',
      reason: `flaky tests failed again after a retry (${names(failing)})`,
      tests: failing,
    };
  }
  const culprits = failing.filter((t) => !t.quarantined);
  return {
    kind: 'real_failure',
    reason: `tests failed that are not quarantined: ${names(culprits)}`,
    tests: culprits,
  };
}
