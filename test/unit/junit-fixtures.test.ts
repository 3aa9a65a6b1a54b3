// One test per real-world fixture in /work/shared/fixtures/junit, asserting the exact attempts.
import { describe, expect, it } from 'vitest';
import { errorsOf, outline, parseText, readSharedFixture } from './fixtures-junit/helpers.ts';

const parseFixture = (name: string) => parseText(readSharedFixture(name));

describe('JUnit fixtures', () => {
  it('01 googletest fail: one failed attempt with file, line, zone-less timestamp as UTC', () => {
    const { attempts, summary } = parseFixture('01-trunk-analytics-cli-googletest-fail.xml');
    expect(summary).toEqual({
      ok: true,
      counts: { testcases: 1, attempts: 1, failures: 1, skipped: 0, retries: 0 },
      problems: [],
    });
    expect(attempts).toEqual([
      {
        name: 'Hello',
        classname: 'HelloTest',
        file: 'trunk/hello_world/cc/hello_test.cc',
        parent: 'HelloTest',
        suite: 'HelloTest',
        customId: null,
        line: 9,
        outcome: 'failed',
        failureKind: 'failure',
        failureMessage: 'Failure at 1:00',
        failureType: null,
        failureText: null,
        durationMs: 1,
        timestamp: Date.UTC(2024, 11, 10, 1, 0, 0),
        retryIndex: 0,
        source: 'testcase',
        caseIndex: 0,
      },
    ]);
  });

  it('02 googletest pass: same identity passes, time="0." is 0 ms', () => {
    const { attempts, summary } = parseFixture('02-trunk-analytics-cli-googletest-pass-retry.xml');
    expect(summary.ok).toBe(true);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      name: 'Hello',
      classname: 'HelloTest',
      file: 'trunk/hello_world/cc/hello_test.cc',
      parent: 'HelloTest',
      outcome: 'passed',
      failureKind: null,
      durationMs: 0,
      timestamp: Date.UTC(2024, 11, 10, 2, 0, 0),
      retryIndex: 0,
    });
  });

  it('04 surefire flakyFailure: a failed attempt (stack trace, decoded entities) then the final pass', () => {
    const { attempts, summary } = parseFixture('04-maven-surefire-flakyFailure.xml');
    expect(summary.counts).toEqual({ testcases: 1, attempts: 2, failures: 1, skipped: 0, retries: 1 });
    const klass = 'io.sodadata.dependson.soda.integrations.msteams.MicrosoftTeamsCrudTest';
    const [flaky, final] = attempts;
    expect(flaky).toMatchObject({
      name: 'createWebhook',
      classname: klass,
      parent: klass,
      file: null,
      outcome: 'failed',
      failureKind: 'failure',
      failureType: 'java.lang.AssertionError',
      failureMessage: '\nExpected: <false>\n     but: was <true>',
      source: 'flaky',
      retryIndex: 0,
      durationMs: null,
    });
    expect(flaky?.failureText).toMatch(/^java\.lang\.AssertionError: \n\nExpected: <false>/);
    expect(flaky?.failureText).toMatch(/ArrayList\.java:1596\)$/);
    expect(flaky?.failureText).not.toContain('Some error output here'); // system-err is not failure text
    expect(final).toMatchObject({ outcome: 'passed', source: 'testcase', retryIndex: 1, durationMs: 683 });
  });

  it('06 nextest/quick-junit: every flaky and rerun element is an attempt, in execution order', () => {
    const { attempts, summary } = parseFixture('06-quick-junit-nextest-flaky-rerun-elements.xml');
    expect(summary.ok).toBe(true);
    expect(summary.counts).toEqual({ testcases: 8, attempts: 14, failures: 9, skipped: 1, retries: 6 });
    expect(outline(attempts)).toEqual([
      'testcase0 passed#0',
      'testcase1 failed#0',
      'testcase2 failed#0',
      'testcase3 skipped#0',
      'testcase4 failed#0',
      'testcase4 failed#1',
      'testcase4 passed#2',
      'testcase5 failed#0',
      'testcase5 failed#1',
      'testcase5 failed#2',
      'testcase6 passed#0',
      'testcase7 failed#0',
      'testcase7 failed#1',
      'testcase7 passed#2',
    ]);
    expect(attempts.map((a) => a.source).join(',')).toBe(
      'testcase,testcase,testcase,testcase,flaky,flaky,testcase,testcase,rerun,rerun,testcase,flaky,flaky,testcase',
    );
    expect(attempts.every((a) => a.parent === 'testsuite0' && a.classname === null)).toBe(true);
    const [, failure, error, skipped, flakyFailure, flakyError] = attempts;
    expect(failure).toMatchObject({
      failureKind: 'failure',
      failureMessage: 'testcase1-message',
      failureText: 'this is the failure description',
      durationMs: 4242,
    });
    expect(error).toMatchObject({ failureKind: 'error', failureType: 'error type', durationMs: 421580 });
    // testcase3 has its own timestamp with a -07:00 offset; the others inherit the suite's -08:00 one.
    expect(skipped?.timestamp).toBe(Date.UTC(2021, 3, 1, 18, 52, 41));
    expect(attempts[0]?.timestamp).toBe(Date.UTC(2021, 3, 1, 18, 52, 39));
    expect(flakyFailure).toMatchObject({
      failureKind: 'failure',
      failureText: 'this is a flaky failure description',
    });
    expect(flakyError).toMatchObject({
      failureKind: 'error',
      failureText: 'flaky error description\nflaky stack trace',
    });
    expect(attempts[9]).toMatchObject({ failureKind: 'error', failureText: 'retry error stack trace' });
    expect(summary.problems).toEqual([
      expect.objectContaining({ severity: 'warning', message: expect.stringContaining('testcase7') }),
    ]);
  });

  it('08 nested suites: parent is the outermost suite, suite the innermost; same identity counts as retries', () => {
    const { attempts, summary } = parseFixture('08-nested-testsuites.xml');
    expect(summary.ok).toBe(true);
    expect(attempts.map((a) => [a.name, a.suite, a.outcome, a.retryIndex, a.durationMs])).toEqual([
      ['A', 'TestA', 'failed', 0, 10_000],
      ['B', 'TestA', 'passed', 0, 20_000],
      ['A', 'TestB', 'passed', 1, 30_000],
      ['B', 'TestB', 'failed', 1, 40_000],
      ['A', 'packet', 'failed', 2, 50_000],
    ]);
    expect(attempts.every((a) => a.parent === 'All tests' && a.classname === null && a.file === null)).toBe(
      true,
    );
  });

  it('09 pytest on one line: dotted classname, message and traceback text', () => {
    const { attempts, summary } = parseFixture('09-pytest-single-line.xml');
    expect(summary.counts).toEqual({ testcases: 4, attempts: 4, failures: 2, skipped: 0, retries: 0 });
    expect(outline(attempts)).toEqual([
      'test_which_succeeds passed#0',
      'test_which_fails failed#0',
      'test_with_error failed#0',
      'test_with_flaky_success passed#0',
    ]);
    expect(attempts.every((a) => a.classname === 'python.test_sample' && a.parent === 'pytest')).toBe(true);
    expect(attempts[1]?.failureMessage).toBe("AssertionError: assert 'test' == 'xyz'\n  - xyz\n  + test");
    expect(attempts[1]?.failureText).toMatch(/^def test_which_fails\(\):\n[\s\S]*> {7}assert/);
    expect(attempts[1]?.failureText).toMatch(/python\/test_sample\.py:10: AssertionError$/);
    expect(attempts[0]?.timestamp).toBe(Date.UTC(2020, 9, 12, 18, 46, 11, 226));
  });

  it('11 jest-junit: suite name (file path) is the parent, describe chain is the classname', () => {
    const { attempts, summary } = parseFixture('11-jest-junit.xml');
    expect(summary.counts).toEqual({ testcases: 6, attempts: 6, failures: 4, skipped: 1, retries: 0 });
    expect(attempts.map((a) => [a.parent, a.classname, a.name, a.outcome])).toEqual([
      ['__tests__\\main.test.js', 'Test 1', 'Passing test', 'passed'],
      ['__tests__\\main.test.js', 'Test 1 › Test 1.1', 'Failing test', 'failed'],
      ['__tests__\\main.test.js', 'Test 1 › Test 1.1', 'Exception in target unit', 'failed'],
      ['__tests__\\main.test.js', 'Test 2', 'Exception in test', 'failed'],
      ['__tests__\\second.test.js', null, 'Timeout test', 'failed'],
      ['__tests__\\second.test.js', null, 'Skipped test', 'skipped'],
    ]);
    expect(attempts.every((a) => a.file === null)).toBe(true);
    expect(attempts[1]?.failureText).toMatch(/^Error: expect\(received\)\.toBeTruthy\(\)\n\nReceived: false/);
    expect(attempts[1]?.failureText).toContain('Object.<anonymous> (C:\\Users');
  });

  it('14 gotestsum: 60 cases over 4 packages, zero-time timestamps dropped, TestMain without classname', () => {
    const { attempts, summary } = parseFixture('14-gotestsum.xml');
    expect(summary.counts).toEqual({ testcases: 60, attempts: 60, failures: 13, skipped: 5, retries: 0 });
    expect(attempts[0]).toMatchObject({
      name: 'TestMain',
      classname: null,
      parent: 'gotest.tools/gotestsum/testjson/internal/badmain',
      outcome: 'failed',
      failureText:
        'sometimes main can exit 2\nFAIL\tgotest.tools/gotestsum/testjson/internal/badmain\t0.001s',
    });
    expect(attempts.every((a) => a.timestamp === null)).toBe(true);
    expect(attempts.every((a) => a.parent === a.suite && (a.classname ?? a.parent) === a.parent)).toBe(true);
    const parents = new Set(attempts.map((a) => a.parent?.split('/').pop()));
    expect([...parents]).toEqual(['badmain', 'good', 'parallelfails', 'withfails']);
    expect(attempts.filter((a) => a.name === 'TestNestedSuccess/a/sub')).toHaveLength(2);
  });

  it('15 gotestsum --rerun-fails: the duplicate testcase is retry 1 of the same test', () => {
    const { attempts, summary } = parseFixture('15-gotestsum-rerun-fails-duplicates.xml');
    expect(summary.counts).toEqual({ testcases: 4, attempts: 4, failures: 1, skipped: 1, retries: 1 });
    expect(outline(attempts)).toEqual([
      'TestWebSocketReconnectRace failed#0',
      'TestCreateChannelBookmark skipped#0',
      'TestWebSocketUpgrade passed#0',
      'TestWebSocketReconnectRace passed#1',
    ]);
    expect(attempts[3]).toMatchObject({
      classname: 'github.com/example/example/server/v8/channels/api4',
      durationMs: 7780,
      timestamp: Date.UTC(2024, 9, 24, 12, 7, 54),
      caseIndex: 3,
    });
  });

  it('16 C unit: file and line from the testcase, no classname, self-closing failure', () => {
    const { attempts } = parseFixture('16-c-unit-file-line-no-classname.xml');
    expect(attempts.map((a) => [a.name, a.file, a.line, a.classname, a.outcome])).toEqual([
      ['test_my_sum_pos', 'main.c', 44, null, 'passed'],
      ['test_my_sum_neg', 'main.c', 45, null, 'passed'],
      ['test_my_sum_fail', 'main.c', 38, null, 'failed'],
      ['test_my_sum_zero', 'main.c', 47, null, 'passed'],
    ]);
    expect(attempts[2]).toMatchObject({
      parent: 'CI basic test',
      failureMessage: 'Expected 2 Was 0',
      failureType: 'failure',
      failureText: null,
      durationMs: null,
    });
  });

  it('18 malformed web-test-runner file: rejected with line and column, nothing delivered', () => {
    const { attempts, summary } = parseFixture('18-web-test-runner-template-MALFORMED.xml');
    expect(summary.ok).toBe(false);
    expect(attempts).toEqual([]);
    expect(summary.problems).toEqual([
      { severity: 'error', message: 'malformed XML: disallowed character.', line: 9, column: 59 },
    ]);
    const line9 = readSharedFixture('18-web-test-runner-template-MALFORMED.xml').split('\n')[8];
    expect(line9?.[58]).toBe('<'); // column 59 (1-based) is the "<" of time="<<computed>>"
  });

  it('20 Testmo reference: comments ignored, suite file inherited, error vs failure kinds', () => {
    const { attempts, summary } = parseFixture('20-testmo-junit-complete-reference.xml');
    expect(summary).toMatchObject({ ok: true, problems: [] });
    expect(outline(attempts)).toEqual([
      'testCase1 passed#0',
      'testCase2 passed#0',
      'testCase3 passed#0',
      'testCase4 skipped#0',
      'testCase5 failed#0',
      'testCase6 failed#0',
      'testCase7 passed#0',
      'testCase8 passed#0',
    ]);
    expect(attempts[4]).toMatchObject({
      failureKind: 'failure',
      failureMessage: 'Expected value did not match.',
      failureType: 'AssertionError',
      failureText: null,
      durationMs: 2902.412,
      line: 202,
    });
    expect(attempts[5]).toMatchObject({ failureKind: 'error', failureMessage: 'Division by zero.' });
    expect(
      attempts.every(
        (a) =>
          a.file === 'tests/registration.code' &&
          a.parent === 'Tests.Registration' &&
          a.timestamp === Date.UTC(2021, 3, 2, 15, 48, 23),
      ),
    ).toBe(true);
    expect(errorsOf(summary)).toEqual([]);
  });
});
