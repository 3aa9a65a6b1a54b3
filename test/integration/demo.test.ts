import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Demo, DemoError, runDemo } from '../../src/demo/demo.ts';
import { formatSummary } from '../../src/demo/summary.ts';
import { startDemo } from '../support/demo.ts';
import { runCli } from '../support/process.ts';

// The demo always runs on its own SQLite database in its data folder, even when DATABASE_URL is set
// for the rest of the suite: it is a self-contained scenario, not a test of the database engines.
describe('mainline demo (in process)', () => {
  let demo: Demo;
  const lines: string[] = [];

  beforeAll(async () => {
    demo = await startDemo('mainline-demo-test-', { log: (line) => lines.push(line) });
  }, 90_000);

  afterAll(() => demo?.close());

  async function post<T = Record<string, unknown>>(endpoint: string, body: object): Promise<T> {
    const res = await fetch(`${demo.url}/v1/${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': demo.token },
      body: JSON.stringify(body),
    });
    expect(res.status, `${endpoint}: ${await res.clone().text()}`).toBe(200);
    return (await res.json()) as T;
  }

  const scoped = () => ({ repo: demo.repo, org_url_slug: demo.org });
  const queue = () => ({ repo: demo.repo, targetBranch: 'main' });

  type Unhealthy = {
    tests: { id: string; name: string; status: { value: string }; quarantined: boolean }[];
  };

  it('reaches its expected end, on loopback, and says what it did', () => {
    expect(demo.summary.problems).toEqual([]);
    expect(demo.summary.ok).toBe(true);
    expect(new URL(demo.url).hostname).toBe('127.0.0.1');
    expect(new URL(demo.url).port).not.toBe('0');
    expect(lines).toContain('✓ pushed 5 branches');
    expect(lines.some((l) => l.includes('PR #5 failed: merge conflict'))).toBe(true);
    const summary = formatSummary(demo).join('\n');
    expect(summary).toContain(`MAINLINE_TOKEN=${demo.token}`);
    expect(summary).toContain('/v1/flaky-tests/list-unhealthy-tests');
    expect(summary).toContain('/v1/getSubmittedPullRequest');
  });

  it('list-unhealthy-tests shows a FLAKY test (quarantined) and a BROKEN test (not quarantined)', async () => {
    const flaky = await post<Unhealthy>('flaky-tests/list-unhealthy-tests', {
      ...scoped(),
      status: 'FLAKY',
      page_query: { page_size: 100 },
    });
    expect(flaky.tests.map((t) => t.name)).toContain('suggests completions while typing');
    expect(flaky.tests.every((t) => t.status.value === 'flaky' && t.quarantined)).toBe(true);
    const broken = await post<Unhealthy>('flaky-tests/list-unhealthy-tests', {
      ...scoped(),
      status: 'BROKEN',
      page_query: { page_size: 100 },
    });
    expect(broken.tests.map((t) => t.name)).toEqual(['rounds the total to the cent']);
    expect(broken.tests[0]?.quarantined).toBe(false);
  });

  it('list-quarantined-tests holds the flaky test, auto-quarantined', async () => {
    const page = await post<{ quarantined_tests: { name: string; quarantine_setting: string }[] }>(
      'flaky-tests/list-quarantined-tests',
      { ...scoped(), page_query: { page_size: 100 } },
    );
    expect(page.quarantined_tests).toEqual([
      expect.objectContaining({
        name: 'suggests completions while typing',
        quarantine_setting: 'AUTO_QUARANTINE',
      }),
    ]);
  });

  it('get-test-details answers for the unhealthy tests, with failure rates and failures', async () => {
    for (const t of [...demo.summary.flaky, ...demo.summary.broken]) {
      const { test } = await post<{
        test: { failure_rate_last_7d: number; most_common_failures: { summary: string }[] };
      }>('flaky-tests/get-test-details', { ...scoped(), test_id: t.id });
      expect(test.failure_rate_last_7d).toBeGreaterThan(0);
      expect(test.most_common_failures.length).toBeGreaterThan(0);
    }
  });

  it('the queue merged the clean and flaky PRs and failed the broken and the conflicting one', async () => {
    type Pr = { state: string; stateReason: string; flakeProtection?: { decision: string } };
    const pr = (n: number) => post<Pr>('getSubmittedPullRequest', { ...queue(), pr: { number: n } });
    for (const n of [1, 2, 4]) expect((await pr(n)).state).toBe('merged');
    const broken = await pr(3);
    expect(broken.state).toBe('failed');
    expect(broken.stateReason).toContain('rounds the total to the cent');
    expect(broken.flakeProtection?.decision).toBe('real_failure');
    const conflicting = await pr(5);
    expect(conflicting.state).toBe('failed');
    expect(conflicting.stateReason).toMatch(/merge conflict in config\/limits\.yaml/);
    const history = execFileSync('git', ['--git-dir', demo.gitRepository, 'log', '--format=%s', 'main'], {
      encoding: 'utf8',
    });
    expect(history.split('\n').slice(0, 3)).toEqual([
      'Raise the upload limit to 50 MB (#4)',
      'Cache search suggestions (#2)',
      'Rate-limit failed sign-ins (#1)',
    ]);
  });

  it('getMergeQueueTestingDetails shows the finished runs and the results uploaded for them', async () => {
    type Details = {
      status: string;
      testedPullRequests: { prNumber: number }[];
      statusChecks: { context: string; state: string }[];
      testResults?: { uploads: number; testCases: number };
    };
    const runs = demo.summary.prs.flatMap((p) => p.testRuns.map((r) => ({ pr: p.number, id: r.testRunId })));
    expect(runs.map((r) => r.pr)).toEqual([1, 2, 3, 4]);
    for (const run of runs) {
      const d = await post<Details>('getMergeQueueTestingDetails', { ...queue(), testRunId: run.id });
      expect(d.status).toBe(run.pr === 3 ? 'failed' : 'succeeded');
      expect(d.testedPullRequests.map((p) => p.prNumber)).toEqual([run.pr]);
      expect(d.statusChecks).toEqual([
        expect.objectContaining({ context: 'test', state: run.pr === 3 ? 'FAILURE' : 'SUCCESS' }),
      ]);
      expect(d.testResults?.uploads).toBe(1);
      expect(d.testResults?.testCases).toBe(34);
    }
  });

  it('keeps the JUnit reports it uploaded, and refuses a data folder that already holds data', async () => {
    expect(fs.readdirSync(path.join(demo.dataDir, 'ci-reports')).length).toBe(demo.summary.ciJobs);
    await expect(runDemo({ port: 0, dataDir: demo.dataDir, logLevel: 'silent' })).rejects.toThrow(DemoError);
  });
});

describe('mainline demo --forge gitlab (in process)', () => {
  let demo: Demo;
  const lines: string[] = [];

  beforeAll(async () => {
    demo = await startDemo('mainline-demo-gitlab-test-', {
      timeoutSeconds: 90,
      log: (line) => lines.push(line),
      forge: 'gitlab',
    });
  }, 120_000);

  afterAll(() => demo?.close());

  it('runs the same scenario on merge requests of a GitLab project: the same PRs merge and fail, the same tests are flagged', async () => {
    expect(demo.summary.problems).toEqual([]);
    expect(demo.forge).toBe('gitlab');
    expect(demo.repo).toEqual({ host: 'gitlab.local', owner: 'demo', name: 'shop' });
    expect(lines.some((l) => l.startsWith(`GitLab simulator at ${demo.gitlabUrl}`))).toBe(true);
    // The demo names merge requests as GitLab does (!n), never as pull requests (#n); the queue's
    // own reasons quoted in its lines are the engine's words.
    expect(lines.some((l) => l.includes('opened MR !1 '))).toBe(true);
    expect(lines.filter((l) => /^\s*(opened|CI|queue)\s+PR #|\(PR #|submitted PRs/.test(l))).toEqual([]);
    expect(demo.summary.prs.map((p) => [p.number, p.state])).toEqual([
      [1, 'merged'],
      [2, 'merged'],
      [3, 'failed'],
      [4, 'merged'],
      [5, 'failed'],
    ]);
    expect(demo.summary.flaky.map((t) => t.name)).toContain('suggests completions while typing');
    expect(demo.summary.broken.map((t) => t.name)).toEqual(['rounds the total to the cent']);
    // Merged by GitLab's merge API: the queue's squash commits, named by merge request.
    const history = execFileSync('git', ['--git-dir', demo.gitRepository, 'log', '--format=%s', 'main'], {
      encoding: 'utf8',
    });
    for (const title of [
      'Rate-limit failed sign-ins (!1)',
      'Cache search suggestions (!2)',
      'Raise the upload limit to 50 MB (!4)',
    ])
      expect(history).toContain(title);
    // The test runs link each merge request's GitLab page.
    const run = demo.summary.prs[0]?.testRuns[0];
    const res = await fetch(`${demo.url}/v1/getMergeQueueTestingDetails`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': demo.token },
      body: JSON.stringify({ repo: demo.repo, targetBranch: 'main', testRunId: run?.testRunId }),
    });
    const details = (await res.json()) as { testedPullRequests: { prUrl: string }[] };
    expect(details.testedPullRequests[0]?.prUrl).toBe(`${demo.gitlabUrl}/demo/shop/-/merge_requests/1`);
  });
});

describe('mainline demo (the command)', () => {
  it('--exit runs the scenario and exits 0', async () => {
    const res = await runCli(['demo', '--exit', '--port', '0', '--log-level', 'silent'], {});
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('✓ scenario finished');
    expect(res.stdout).toContain('PR #3 failed');
  }, 120_000);

  it('refuses a bad flag with exit code 2', async () => {
    const res = await runCli(['demo', '--port', 'eighty'], {});
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain('--port must be a whole number');
  });

  it('refuses a forge it cannot run on with exit code 2', async () => {
    const res = await runCli(['demo', '--forge', 'svn'], {});
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain('--forge must be git or gitlab');
  });
});
