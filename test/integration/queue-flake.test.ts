import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { testingDetails } from '../support/queue-api.ts';
import { junitXml, upload } from '../support/upload.ts';

type Mode = 'off' | 'ignore_quarantined' | 'retry_flaky';

/** A test that failed and passed on one commit of main: FLAKY, and quarantined unless the repository says otherwise. */
async function makeFlaky(s: GitScenario, name: string): Promise<void> {
  await upload(s.t, s.token, [{ name: 'r.xml', content: junitXml([{ name, fail: 'timeout' }]) }], {
    sha: 'f1a4e00',
  });
  await upload(s.t, s.token, [{ name: 'r.xml', content: junitXml([{ name }]) }], { sha: 'f1a4e00' });
}

/** The run testing PR 1 reports results (the named tests failing) and then a failed status. */
async function runFails(
  s: GitScenario,
  failing: string[],
  passing: string[] = ['test_ok'],
  withResults = true,
): Promise<string> {
  const run = (await s.runsInProgress()).find((r) => r.tested.includes(1));
  expect(run).toBeDefined();
  if (withResults) {
    const cases = [
      ...failing.map((name) => ({ name, fail: 'AssertionError' })),
      ...passing.map((name) => ({ name })),
    ];
    const res = await upload(s.t, s.token, [{ name: 'ci.xml', content: junitXml(cases) }], {
      sha: run!.sha,
      branch: 'ci-checkout',
    });
    expect(res.statusCode).toBe(200);
  }
  await s.post('/v1/git/reportStatus', { repo: REPO, sha: run!.sha, context: 'ci', state: 'failure' });
  await s.settle();
  return run!.id;
}

async function queued(mode: Mode, repoSettings: object = {}): Promise<GitScenario> {
  const s = await GitScenario.create({ directMergeMode: 'off', flakeProtection: mode });
  if (Object.keys(repoSettings).length > 0) {
    const res = await s.post('/v1/flaky-tests/update-repository-settings', {
      repo: REPO,
      org_url_slug: 'acme',
      settings: repoSettings,
    });
    expect(res.statusCode).toBe(200);
  }
  await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
  return s;
}

describe('a flake-aware merge queue', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('ignore_quarantined: a run failing only on a quarantined test passes, and the PR merges saying why', async () => {
    s = await queued('ignore_quarantined');
    await makeFlaky(s, 'test_flaky');
    await s.submit(1);
    await s.settle();
    const runId = await runFails(s, ['test_flaky']);
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
    const pr = await s.pr(1);
    expect(pr.state).toBe('merged');
    expect(pr.stateReason).toMatch(/only quarantined tests failed \(test_flaky\)/);
    expect(pr.flakeProtection).toMatchObject({
      decision: 'ignored_quarantined',
      tests: [{ name: 'test_flaky', quarantined: true }],
    });
    const details = await testingDetails(s, REPO, runId);
    expect(details).toMatchObject({
      status: 'succeeded',
      testResults: { uploads: 1, testCases: 2, failures: 1 },
      flakeProtection: {
        decision: 'ignored_quarantined',
        tests: [{ testId: expect.any(String), name: 'test_flaky' }],
      },
    });
  });

  it('off: the same run is a failure and the PR is ejected', async () => {
    s = await queued('off');
    await makeFlaky(s, 'test_flaky');
    await s.submit(1);
    await s.settle();
    await runFails(s, ['test_flaky']);
    expect((await s.pr(1)).state).toBe('failed');
    expect(s.history()).toEqual(['Initial commit']);
  });

  it('retry_flaky: a run failing only on a flaky (not quarantined) test is retried once, and merges when the retry passes', async () => {
    s = await queued('retry_flaky', { auto_quarantine_flaky: false });
    await makeFlaky(s, 'test_flappy');
    await s.submit(1);
    await s.settle();
    const first = await runFails(s, ['test_flappy']);
    const retry = (await s.runsInProgress()).find((r) => r.tested.includes(1));
    expect(retry?.id).toBeDefined();
    expect(retry?.id).not.toBe(first);
    const judged = await testingDetails(s, REPO, first);
    expect(judged.flakeProtection).toMatchObject({
      decision: 'retried_flaky',
      tests: [{ name: 'test_flappy', quarantined: false, status: 'FLAKY' }],
    });
    await s.ci('success', 1);
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
  });

  it('retry_flaky: a flaky failure again after the retry ejects the PR, saying so', async () => {
    s = await queued('retry_flaky', { auto_quarantine_flaky: false });
    await makeFlaky(s, 'test_flappy');
    await s.submit(1);
    await s.settle();
    await runFails(s, ['test_flappy']);
    await runFails(s, ['test_flappy']);
    const pr = await s.pr(1);
    expect(pr.state).toBe('failed');
    expect(pr.stateReason).toMatch(/flaky tests failed again after a retry/);
  });

  it.each(['off', 'ignore_quarantined', 'retry_flaky'] as const)(
    '%s: a failure in a healthy test ejects the PR, naming it',
    async (mode) => {
      s = await queued(mode);
      await makeFlaky(s, 'test_flaky');
      await s.submit(1);
      await s.settle();
      await runFails(s, ['test_flaky', 'test_solid']);
      const pr = await s.pr(1);
      expect(pr.state).toBe('failed');
      if (mode !== 'off') expect(pr.stateReason).toMatch(/not quarantined: test_solid/);
      expect(s.history()).toEqual(['Initial commit']);
    },
  );

  it('no results uploaded for the failed run → a real failure', async () => {
    s = await queued('ignore_quarantined');
    await s.submit(1);
    await s.settle();
    const runId = await runFails(s, [], [], false);
    expect((await s.pr(1)).state).toBe('failed');
    const details = await testingDetails(s, REPO, runId);
    expect(details.flakeProtection).toMatchObject({ decision: 'no_results' });
  });

  it('results uploaded for a test branch count on the merge-queue branch for detection', async () => {
    s = await queued('ignore_quarantined');
    await s.submit(1);
    await s.settle();
    const [run] = await s.runsInProgress();
    await upload(s.t, s.token, [{ name: 'ci.xml', content: junitXml([{ name: 'test_mq', fail: 'boom' }]) }], {
      sha: run!.sha,
      branch: 'ci-checkout',
    });
    await upload(s.t, s.token, [{ name: 'ci.xml', content: junitXml([{ name: 'test_mq' }]) }], {
      sha: run!.sha,
      branch: 'ci-checkout',
    });
    const flaky = (
      await s.post('/v1/flaky-tests/list-unhealthy-tests', {
        repo: REPO,
        org_url_slug: 'acme',
        status: 'FLAKY',
        page_query: { page_size: 10 },
      })
    ).json();
    expect(flaky.tests[0].status.reason).toMatch(/on mainline-merge\/pr-1\//);
  });

  it('flakeProtection can come from .mainline.yaml; updateQueue overrides it', async () => {
    s = await GitScenario.create(
      {},
      { 'README.md': 'hi\n', '.mainline.yaml': 'merge:\n  flake_protection: retry_flaky\n' },
    );
    expect((await s.queue()).flakeProtection).toBe('retry_flaky');
    const res = await s.post('/v1/updateQueue', {
      repo: REPO,
      targetBranch: 'main',
      flakeProtection: 'IGNORE_QUARANTINED',
    });
    expect(res.json().flakeProtection).toBe('ignore_quarantined');
    expect(
      (await s.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', flakeProtection: 'sometimes' }))
        .statusCode,
    ).toBe(400);
  });
});
