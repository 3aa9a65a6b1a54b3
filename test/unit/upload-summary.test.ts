// The words of `mainline upload`'s summary (issue 24): attempts (runs of tests, retries included) and
// failed tests (each test once, by its last attempt) are counted under names that cannot be confused.
// The real client's answer is exercised end to end in test/integration/cli-upload.test.ts.
import { describe, expect, it } from 'vitest';
import type { FailedTest, UploadResponse } from '../../src/cli/client.ts';
import { formatSummary } from '../../src/cli/upload-summary.ts';

function failed(n: number, quarantined = false): FailedTest {
  return { test_case_id: `id-${n}`, name: `test_${n}`, classname: 'pkg.Suite', quarantined };
}

function response(counts: Partial<UploadResponse['counts']>, failedTests: FailedTest[]): UploadResponse {
  const all = { files: 1, test_cases: 0, attempts: 0, failures: 0, retries: 0, skipped: 0, ...counts };
  const { files: _files, ...fileCounts } = all;
  return {
    upload_id: 'u-1',
    duplicate: false,
    repo: { host: 'github.com', owner: 'acme', name: 'web' },
    counts: all,
    files: [{ name: 'report.xml', ok: true, counts: fileCounts, problems: [] }],
    failed_tests: failedTests,
    failed_tests_truncated: false,
    all_failures_quarantined: false,
  };
}

describe('the upload summary', () => {
  it('says attempts for runs of tests and tests for tests: 16 failed attempts of 7 failing tests', () => {
    // Seven tests, each retried until its retries ran out: 16 <testcase> elements, all failed.
    const text = formatSummary(
      response(
        { test_cases: 16, attempts: 16, failures: 16, retries: 9 },
        [1, 2, 3, 4, 5, 6, 7].map((n) => failed(n, n === 1)),
      ),
      'http://ml',
    );
    const lines = text.split('\n');
    expect(lines[1]).toBe('16 test attempts: 0 passed, 16 failed, 0 skipped; 9 retries among them');
    expect(lines[2]).toBe('7 tests failed (each counted once, by its last attempt), 1 of them quarantined:');
    expect(text).not.toMatch(/test cases?\b/);
    expect(text).not.toMatch(/\b16 failed tests?\b/);
    expect(lines.filter((l) => l.startsWith('  FAILED'))).toHaveLength(6);
  });

  it('tells failed attempts that passed on a retry from failed tests', () => {
    const text = formatSummary(
      response({ test_cases: 5, attempts: 6, failures: 1, retries: 1 }, []),
      'http://ml',
    );
    expect(text).toContain('6 test attempts: 5 passed, 1 failed, 0 skipped; 1 retry among them');
    expect(text).toContain('no test failed: each of the 1 failed attempt passed on a later attempt');
  });

  it('says no test failed when no attempt failed, and counts one of each in the singular', () => {
    const text = formatSummary(response({ test_cases: 2, attempts: 2, skipped: 1 }, []), 'http://ml');
    expect(text).toContain('uploaded 1 file for github.com/acme/web to http://ml (upload u-1)');
    expect(text).toContain('2 test attempts: 1 passed, 0 failed, 1 skipped\n');
    expect(text.split('\n').at(-1)).toBe('no test failed');
    const one = formatSummary(
      response({ test_cases: 1, attempts: 1, failures: 1 }, [failed(1)]),
      'http://ml',
    );
    expect(one).toContain('1 test attempt: 0 passed, 1 failed');
    expect(one).toContain('1 test failed (each counted once, by its last attempt), 0 of them quarantined:');
  });

  it('gives a file with problems the same words', () => {
    const r = response({ test_cases: 3, attempts: 4, failures: 2, retries: 1 }, [failed(1)]);
    r.files[0]!.problems.push({ severity: 'warning', message: 'no name', line: 3 });
    expect(formatSummary(r, 'http://ml')).toContain(
      '  report.xml: 4 test attempts: 2 passed, 2 failed, 0 skipped; 1 retry among them\n    warning at line 3: no name',
    );
  });
});
