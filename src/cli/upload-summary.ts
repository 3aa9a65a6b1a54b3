import type { FailedTest, FileReport, UploadResponse } from './client.ts';

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
  const head = file.ok
    ? `  ${file.name}: ${plural(file.counts.test_cases, 'test case')}, ${file.counts.failures} failed`
    : `  ${file.name}: not ingested`;
  const problems = file.problems.map((p) => {
    const at =
      p.line === undefined ? '' : ` at line ${p.line}${p.column === undefined ? '' : `:${p.column}`}`;
    return `    ${p.severity}${at}: ${p.message}`;
  });
  return [head, ...problems];
}

function failedLines(response: UploadResponse): string[] {
  const failed = response.failed_tests;
  if (failed.length === 0) return ['no failed tests'];
  const quarantined = failed.filter((t) => t.quarantined).length;
  const more = response.failed_tests_truncated ? ' (more were cut)' : '';
  const lines = [`${plural(failed.length, 'failed test')}${more}, ${quarantined} of them quarantined:`];
  for (const test of failed.slice(0, MAX_LISTED_TESTS)) {
    lines.push(`  ${test.quarantined ? 'quarantined ' : 'FAILED      '} ${testLabel(test)}`);
  }
  if (failed.length > MAX_LISTED_TESTS) lines.push(`  … and ${failed.length - MAX_LISTED_TESTS} more`);
  return lines;
}

/** A short human summary of an upload's result. */
export function formatSummary(response: UploadResponse, url: string): string {
  const { counts, repo } = response;
  const where = `${repo.host}/${repo.owner}/${repo.name}`;
  const first = response.duplicate
    ? `already uploaded with this upload key; the first upload's result (${response.upload_id}):`
    : `uploaded ${plural(counts.files, 'file')} for ${where} to ${url} (upload ${response.upload_id})`;
  const totals = `${plural(counts.test_cases, 'test case')}, ${counts.failures} failed, ${plural(counts.retries, 'retry', 'retries')}, ${counts.skipped} skipped`;
  const files = response.files.filter((f) => !f.ok || f.problems.length > 0).flatMap(fileLines);
  return [first, totals, ...files, ...failedLines(response)].join('\n');
}
