import type { FailedTest, FileCounts, FileReport, UploadResponse } from './client.ts';

const MAX_LISTED_TESTS = 50;

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** How a failed test is shown: `Class.name` (or `parent > name`), and its file when known. */
export function testLabel(test: FailedTest): string {
  const scope = test.classname || test.parent || '';
  const label = scope === '' ? test.name : `${scope}.${test.name}`;
  return test.file ? `${label} (${test.file})` : label;
}

function fileLines(file: FileReport): string[] {
  const head = file.ok ? `  ${file.name}: ${attemptsLine(file.counts)}` : `  ${file.name}: not ingested`;
  const problems = file.problems.map((p) => {
    const at =
      p.line === undefined ? '' : ` at line ${p.line}${p.column === undefined ? '' : `:${p.column}`}`;
    return `    ${p.severity}${at}: ${p.message}`;
  });
  return [head, ...problems];
}

/**
 * The attempts' tally. An attempt is one run of one test (a retry is another attempt of the same
 * test), so it is never called a "test": "16 attempts, 16 failed" next to "7 tests failed" read as a
 * contradiction when both said "test".
 */
function attemptsLine(c: FileCounts): string {
  const passed = Math.max(0, c.attempts - c.failures - c.skipped);
  const retries = c.retries === 0 ? '' : `; ${plural(c.retries, 'retry', 'retries')} among them`;
  return `${plural(c.attempts, 'test attempt')}: ${passed} passed, ${c.failures} failed, ${c.skipped} skipped${retries}`;
}

function failedLines(response: UploadResponse): string[] {
  const failed = response.failed_tests;
  if (failed.length === 0) {
    return response.counts.failures === 0
      ? ['no test failed']
      : [
          `no test failed: each of the ${plural(response.counts.failures, 'failed attempt')} passed on a later attempt`,
        ];
  }
  const quarantined = failed.filter((t) => t.quarantined).length;
  const more = response.failed_tests_truncated ? ' (more were cut)' : '';
  const lines = [
    `${plural(failed.length, 'test', 'tests')} failed (each counted once, by its last attempt)${more}, ${quarantined} of them quarantined:`,
  ];
  for (const test of failed.slice(0, MAX_LISTED_TESTS)) {
    lines.push(`  ${test.quarantined ? 'quarantined ' : 'FAILED      '} ${testLabel(test)}`);
  }
  if (failed.length > MAX_LISTED_TESTS) lines.push(`  … and ${failed.length - MAX_LISTED_TESTS} more`);
  return lines;
}

/**
 * A short human summary of an upload's result: what was sent, the attempts' tally (runs of tests,
 * retries included), then the tests that failed, each once, by its last attempt.
 */
export function formatSummary(response: UploadResponse, url: string): string {
  const { counts, repo } = response;
  const where = `${repo.host}/${repo.owner}/${repo.name}`;
  const first = response.duplicate
    ? `already uploaded with this upload key; the first upload's result (${response.upload_id}):`
    : `uploaded ${plural(counts.files, 'file')} for ${where} to ${url} (upload ${response.upload_id})`;
  const totals = attemptsLine(counts);
  const files = response.files.filter((f) => !f.ok || f.problems.length > 0).flatMap(fileLines);
  return [first, totals, ...files, ...failedLines(response)].join('\n');
}
