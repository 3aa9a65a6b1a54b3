import type { Demo } from './demo.ts';
import { prName } from './forges.ts';
import type { DemoTest } from './results.ts';

/** Quotes a string for a POSIX shell. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A curl command for a JSON endpoint, reading the server and token from MAINLINE_URL and MAINLINE_TOKEN. */
function curl(endpoint: string, body: object): string {
  return [
    `curl -s -X POST "$MAINLINE_URL/v1/${endpoint}" -H "x-api-token: $MAINLINE_TOKEN"`,
    ` -H 'content-type: application/json' -d ${shellQuote(JSON.stringify(body))}; echo`,
  ].join('');
}

function testLine(kind: string, t: DemoTest): string {
  const q = t.quarantined ? ', quarantined' : '';
  const rate =
    t.failureRate7d === undefined ? '' : `, ${Math.round(t.failureRate7d * 100)}% of runs failed in 7 days`;
  const prs = `${t.pullRequestsImpacted} PR${t.pullRequestsImpacted === 1 ? '' : 's'} impacted`;
  return `  ${kind.padEnd(7)}${t.classname} › ${t.name} (${prs}${rate}${q}): ${t.reason}`;
}

/**
 * The end of the demo's output: what happened, and (while the server runs) commands to look at it
 * through the API.
 */
export function formatSummary(demo: Demo, options: { commands: boolean } = { commands: true }): string[] {
  const s = demo.summary;
  const scoped = { repo: demo.repo, org_url_slug: demo.org };
  const queue = { repo: demo.repo, targetBranch: 'main' };
  const lines = ['', 'What happened:'];
  for (const pr of s.prs) {
    const mark = pr.state === pr.expected ? '' : ` (expected ${pr.expected})`;
    lines.push(
      `  ${prName(demo.forge, pr.number)} ${pr.state}${mark}: ${pr.title} (${pr.story}) - ${pr.reason}`,
    );
  }
  for (const t of s.flaky) lines.push(testLine('FLAKY', t));
  for (const t of s.broken) lines.push(testLine('BROKEN', t));
  lines.push(
    `  ${s.ciJobs} CI jobs ran${options.commands || !demo.temporary ? `; their JUnit reports are in ${demo.dataDir}/ci-reports` : ''}`,
    ...s.problems.map((p) => `  ✗ ${p}`),
  );
  if (!options.commands) return lines;

  const flaky = s.flaky[0];
  const brokenPr = s.prs.find((p) => p.expected === 'failed' && p.testRuns.length > 0);
  const conflictPr = s.prs.find((p) => p.expected === 'failed' && p.testRuns.length === 0);
  const run = brokenPr?.testRuns[0];
  lines.push(
    '',
    `Try the API (token for organization "${demo.org}"; docs at ${demo.url}/docs):`,
    '',
    `  export MAINLINE_URL=${demo.url} MAINLINE_TOKEN=${demo.token} MAINLINE_ORG=${demo.org}`,
    '',
    '  # Flaky and broken tests, and the quarantine',
    `  ${curl('flaky-tests/list-unhealthy-tests', { ...scoped, status: 'FLAKY', page_query: { page_size: 20 } })}`,
    `  ${curl('flaky-tests/list-unhealthy-tests', { ...scoped, status: 'BROKEN', page_query: { page_size: 20 } })}`,
    `  ${curl('flaky-tests/list-quarantined-tests', { ...scoped, page_query: { page_size: 20 } })}`,
  );
  if (flaky !== undefined) {
    lines.push(`  ${curl('flaky-tests/get-test-details', { ...scoped, test_id: flaky.id })}`);
  }
  lines.push('', '  # The merge queue: a failed PR, a conflicting PR, a finished test run');
  if (brokenPr !== undefined)
    lines.push(`  ${curl('getSubmittedPullRequest', { ...queue, pr: { number: brokenPr.number } })}`);
  if (conflictPr !== undefined)
    lines.push(`  ${curl('getSubmittedPullRequest', { ...queue, pr: { number: conflictPr.number } })}`);
  if (run !== undefined)
    lines.push(`  ${curl('getMergeQueueTestingDetails', { ...queue, testRunId: run.testRunId })}`);
  lines.push(
    `  ${curl('listPullRequests', queue)}`,
    '',
    "  # main's history, as the queue merged it",
    `  git --git-dir ${shellQuote(demo.gitRepository)} log --oneline main`,
  );
  return lines;
}
