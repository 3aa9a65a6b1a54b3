// The merge queue on the operator's GET /metrics (issue 24; docs/operations.md, "Merge-queue metrics"):
// a queue driven through the HTTP API to a merge and a failure, with the real runner and a real git
// repository, then scraped as Prometheus would. Counters are counters, waits and runs are histograms,
// queue lengths are gauges, each labelled by organization, repository and target branch, and those
// names appear only behind MAINLINE_METRICS_TOKEN.
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';

const TOKEN = 'metrics-token-for-queue-tests';
const Q = 'org="acme",repo="github.com/acme/web",branch="main"';

async function scrape(app: TestApp['app'], token: string | undefined = TOKEN): Promise<string> {
  const res = await app.inject({
    method: 'GET',
    url: '/metrics',
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** The value of one sample, e.g. sample(body, 'mainline_queue_prs', `${Q},state="testing"`). */
function sample(body: string, name: string, labels: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('merge-queue metrics on /metrics', () => {
  let s: GitScenario | undefined;
  let t: TestApp | undefined;
  afterEach(async () => {
    await s?.close();
    await t?.close();
    s = undefined;
    t = undefined;
  });

  it('counts submissions, merges, failures and runs, and times waits, tests and merges per queue', async () => {
    // One slot, so PR 2 waits for PR 1's run; the scenario's clock moves only when the test says.
    s = await GitScenario.create({ directMergeMode: 'off', concurrency: 1 }, undefined, {
      MAINLINE_METRICS_TOKEN: TOKEN,
    });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Break the build');
    await s.submit(1); // t = 0: tested at once
    s.clock += 60_000;
    await s.submit(2); // t = 60 s: waits for the slot
    await s.settle(); // t = 65 s: PR 1's test branch is built

    const during = await scrape(s.t.app);
    expect(during).toContain('# TYPE mainline_queue_prs gauge');
    expect(sample(during, 'mainline_queue_prs', `${Q},state="testing"`)).toBe(1);
    expect(sample(during, 'mainline_queue_prs', `${Q},state="pending"`)).toBe(1);
    expect(sample(during, 'mainline_queue_test_runs_in_progress', Q)).toBe(1);
    expect(sample(during, 'mainline_queue_prs_submitted_total', Q)).toBe(2);
    expect(sample(during, 'mainline_queue_prs_finished_total', `${Q},state="merged"`)).toBeUndefined();

    s.clock += 600_000;
    await s.ci('success', 1); // t = 665 s: PR 1 passes; its merge frees the slot for PR 2
    await s.settle(); // t = 670 s: merged
    s.clock += 300_000;
    await s.ci('failure', 2); // t = 970 s: PR 2 fails
    await s.settle();
    expect((await s.pr(1)).state).toBe('merged');
    expect((await s.pr(2)).state).toBe('failed');
    const pr2 = (await s.pr(2)).history as { state: string; at: string }[];
    const pr2Testing =
      (Date.parse(pr2.find((h) => h.state === 'testing')!.at) - Date.UTC(2026, 10, 2, 9)) / 1000;

    const after = await scrape(s.t.app);
    for (const name of [
      'mainline_queue_prs_submitted_total',
      'mainline_queue_prs_finished_total',
      'mainline_queue_test_runs_finished_total',
    ]) {
      expect(after).toContain(`# TYPE ${name} counter`);
    }
    for (const name of [
      'mainline_queue_wait_seconds',
      'mainline_queue_testing_seconds',
      'mainline_queue_time_to_merge_seconds',
    ]) {
      expect(after).toContain(`# TYPE ${name} histogram`);
    }
    expect(sample(after, 'mainline_queue_prs_submitted_total', Q)).toBe(2);
    expect(sample(after, 'mainline_queue_prs_finished_total', `${Q},state="merged"`)).toBe(1);
    expect(sample(after, 'mainline_queue_prs_finished_total', `${Q},state="failed"`)).toBe(1);
    const run = (status: string) => `${Q},kind="main",status="${status}"`;
    expect(sample(after, 'mainline_queue_test_runs_finished_total', run('succeeded'))).toBe(1);
    expect(sample(after, 'mainline_queue_test_runs_finished_total', run('failed'))).toBe(1);

    // Waits: PR 1 none, PR 2 from its submission (60 s) to its test (once PR 1's run freed the slot).
    expect(pr2Testing).toBeGreaterThanOrEqual(665);
    expect(sample(after, 'mainline_queue_wait_seconds_count', Q)).toBe(2);
    expect(sample(after, 'mainline_queue_wait_seconds_sum', Q)).toBe(pr2Testing - 60);
    expect(sample(after, 'mainline_queue_wait_seconds_bucket', `le="10",${Q}`)).toBe(1);
    expect(sample(after, 'mainline_queue_wait_seconds_bucket', `le="600",${Q}`)).toBe(1);
    expect(sample(after, 'mainline_queue_wait_seconds_bucket', `le="900",${Q}`)).toBe(2);
    // Testing to the outcome: PR 1 from 0 to its merge at 670 s, PR 2 from its test to the failure CI reported at 970 s.
    expect(sample(after, 'mainline_queue_testing_seconds_sum', `${Q},state="merged"`)).toBe(670);
    expect(sample(after, 'mainline_queue_testing_seconds_count', `${Q},state="failed"`)).toBe(1);
    expect(sample(after, 'mainline_queue_testing_seconds_sum', `${Q},state="failed"`)).toBe(970 - pr2Testing);
    // Submission to merge, PR 1 only: 670 s, in the 900 s bucket and not the 600 s one.
    expect(sample(after, 'mainline_queue_time_to_merge_seconds_count', Q)).toBe(1);
    expect(sample(after, 'mainline_queue_time_to_merge_seconds_sum', Q)).toBe(670);
    expect(sample(after, 'mainline_queue_time_to_merge_seconds_bucket', `le="600",${Q}`)).toBe(0);
    expect(sample(after, 'mainline_queue_time_to_merge_seconds_bucket', `le="900",${Q}`)).toBe(1);
    // Nothing left in the queue.
    for (const state of ['not_ready', 'pending', 'testing', 'tests_passed', 'pending_failure'])
      expect(sample(after, 'mainline_queue_prs', `${Q},state="${state}"`)).toBe(0);
    expect(sample(after, 'mainline_queue_test_runs_in_progress', Q)).toBe(0);
  });

  it('names no organization, repository or branch without MAINLINE_METRICS_TOKEN: queues are added up', async () => {
    t = await buildTestApp();
    const token = await t.token('acme');
    expect((await t.post('/v1/git/createRepository', { repo: REPO }, token)).statusCode).toBe(200);
    for (const targetBranch of ['main', 'release/2026'])
      expect((await t.post('/v1/createQueue', { repo: REPO, targetBranch }, token)).statusCode).toBe(200);
    const body = await scrape(t.app, undefined);
    expect(body).not.toMatch(/acme|release\/2026/);
    const other = 'org="_other",repo="_other",branch="_other"';
    expect(sample(body, 'mainline_queue_prs', `${other},state="pending"`)).toBe(0);
    expect(sample(body, 'mainline_queue_test_runs_in_progress', other)).toBe(0);
  });

  it('gives at most MAINLINE_METRICS_MAX_QUEUES queues labels of their own, the rest are _other', async () => {
    t = await buildTestApp({ MAINLINE_METRICS_TOKEN: TOKEN, MAINLINE_METRICS_MAX_QUEUES: '1' });
    const token = await t.token('acme');
    expect((await t.post('/v1/git/createRepository', { repo: REPO }, token)).statusCode).toBe(200);
    for (const targetBranch of ['main', 'release/2026'])
      expect((await t.post('/v1/createQueue', { repo: REPO, targetBranch }, token)).statusCode).toBe(200);
    const body = await scrape(t.app);
    const runs = body.split('\n').filter((l) => l.startsWith('mainline_queue_test_runs_in_progress{'));
    expect(runs).toHaveLength(2);
    expect(runs.filter((l) => l.includes('org="acme",repo="github.com/acme/web",branch="'))).toHaveLength(1);
    expect(runs.filter((l) => l.includes('org="_other",repo="_other",branch="_other"'))).toHaveLength(1);
  });
});
