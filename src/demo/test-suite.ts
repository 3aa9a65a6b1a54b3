/**
 * The demo repository's synthetic test suite: what its "tests/" folder would report if it were run.
 * The outcome of a run depends only on the effects of the changes under test (see repo-script.ts):
 * a change with the `flaky` effect makes one test fail its first attempt and pass on the retry, a
 * change with the `broken` effect makes another test fail every attempt.
 */

/** What a change under test does to the suite. */
export type Effect = 'flaky' | 'broken';

export interface Failure {
  readonly type: string;
  readonly message: string;
  readonly text: string;
}

export interface SuiteTest {
  /** Test file, relative to the repository root; the CI runs only the files present in the commit. */
  readonly file: string;
  /** Outermost suite (the describe block of the file). */
  readonly suite: string;
  readonly classname: string;
  readonly name: string;
  readonly durationMs: number;
  /** The effect that makes this test fail, and how it fails then. */
  readonly affectedBy?: { readonly effect: Effect; readonly failure: Failure };
}

export const FLAKY_TEST_NAME = 'suggests completions while typing';
export const BROKEN_TEST_NAME = 'rounds the total to the cent';

const FLAKY_FAILURE: Failure = {
  type: 'TimeoutError',
  message: 'no suggestions within 250 ms (got 0 of 8)',
  text: [
    'TimeoutError: no suggestions within 250 ms (got 0 of 8)',
    '    at waitForSuggestions (tests/search.test.ts:88:11)',
    '    at Context.<anonymous> (tests/search.test.ts:94:5)',
  ].join('\n'),
};

const BROKEN_FAILURE: Failure = {
  type: 'AssertionError',
  message: 'expected 1204.57 to equal 1204.58',
  text: [
    'AssertionError: expected 1204.57 to equal 1204.58',
    '    at Context.<anonymous> (tests/billing.test.ts:42:31)',
  ].join('\n'),
};

/** A stable, plausible duration per test (5–400 ms), so reports look alike from run to run. */
function durationOf(name: string): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return 5 + ((h >>> 0) % 396);
}

function group(file: string, suite: string, classes: Record<string, readonly string[]>): SuiteTest[] {
  return Object.entries(classes).flatMap(([classname, names]) =>
    names.map((name) => ({ file, suite, classname, name, durationMs: durationOf(`${classname}.${name}`) })),
  );
}

function withEffect(tests: SuiteTest[], name: string, effect: Effect, failure: Failure): SuiteTest[] {
  return tests.map((t) => (t.name === name ? { ...t, affectedBy: { effect, failure } } : t));
}

/** 34 tests in 4 files. */
export const SUITE: readonly SuiteTest[] = [
  ...group('tests/auth.test.ts', 'auth', {
    'auth.login': [
      'accepts valid credentials',
      'rejects a wrong password',
      'locks the account after 5 failures',
      'issues a session cookie',
    ],
    'auth.session': [
      'expires idle sessions after 30 minutes',
      'refreshes a session on activity',
      'logs out everywhere',
      'rejects a tampered cookie',
      'rotates the session id on login',
    ],
  }),
  ...withEffect(
    group('tests/billing.test.ts', 'billing', {
      'billing.invoice': [
        'sums line items',
        'applies a percentage discount',
        BROKEN_TEST_NAME,
        'adds VAT for EU customers',
        'omits VAT for businesses with a VAT id',
      ],
      'billing.payments': [
        'captures a card payment',
        'refunds a partial amount',
        'retries a declined payment once',
        'records the payment in the ledger',
      ],
    }),
    BROKEN_TEST_NAME,
    'broken',
    BROKEN_FAILURE,
  ),
  ...withEffect(
    group('tests/search.test.ts', 'search', {
      'search.query': [
        'finds products by name',
        'ranks exact matches first',
        'ignores accents',
        'paginates results',
      ],
      'search.suggestions': [
        FLAKY_TEST_NAME,
        'limits suggestions to 8',
        'hides out-of-stock products',
        'debounces keystrokes',
      ],
    }),
    FLAKY_TEST_NAME,
    'flaky',
    FLAKY_FAILURE,
  ),
  ...group('tests/uploads.test.ts', 'uploads', {
    'uploads.images': [
      'accepts a JPEG',
      'accepts a PNG',
      'rejects an executable',
      'resizes to 3 sizes',
      'strips EXIF data',
    ],
    'uploads.limits': [
      'refuses files over the size limit',
      'reads the limit from config/limits.yaml',
      'streams large files to disk',
    ],
  }),
];

/** The test files of the suite, in order. */
export const TEST_FILES: readonly string[] = [...new Set(SUITE.map((t) => t.file))];

/** One execution of one test. */
export interface Attempt {
  readonly test: SuiteTest;
  readonly outcome: 'passed' | 'failed';
  readonly durationMs: number;
  readonly failure?: Failure;
}

export interface SuiteRun {
  /** Every attempt, retries right after the attempt they retry. */
  readonly attempts: readonly Attempt[];
  readonly tests: number;
  /** Tests whose last attempt failed: the run is red. */
  readonly failed: readonly SuiteTest[];
  /** Tests that failed and then passed on a retry: the run stays green. */
  readonly retriedIntoPass: readonly SuiteTest[];
}

/**
 * Runs the tests of the given files as a CI job with `retries` automatic retries of a failed test
 * would: a test affected by an active effect fails (the flaky one only on its first attempt).
 */
export function runSuite(files: ReadonlySet<string>, effects: ReadonlySet<Effect>, retries = 3): SuiteRun {
  const attempts: Attempt[] = [];
  const failed: SuiteTest[] = [];
  const retriedIntoPass: SuiteTest[] = [];
  const tests = SUITE.filter((t) => files.has(t.file));
  for (const test of tests) {
    const affected = test.affectedBy !== undefined && effects.has(test.affectedBy.effect);
    for (let i = 0; i <= retries; i++) {
      const fails =
        affected && test.affectedBy !== undefined && (test.affectedBy.effect === 'broken' || i === 0);
      if (!fails) {
        attempts.push({ test, outcome: 'passed', durationMs: test.durationMs + i * 7 });
        if (i > 0) retriedIntoPass.push(test);
        break;
      }
      attempts.push({
        test,
        outcome: 'failed',
        durationMs: test.durationMs + i * 7,
        ...(test.affectedBy !== undefined ? { failure: test.affectedBy.failure } : {}),
      });
      if (i === retries) failed.push(test);
    }
  }
  return { attempts, tests: tests.length, failed, retriedIntoPass };
}

/** `billing.invoice › rounds the total to the cent`: how the demo prints a test. */
export function testLabel(t: Pick<SuiteTest, 'classname' | 'name'>): string {
  return `${t.classname} › ${t.name}`;
}
