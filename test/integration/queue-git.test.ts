import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { testingDetails } from '../support/queue-api.ts';
import { storedQueueState } from '../support/queue-rows.ts';
import { trunkValidator } from '../support/trunk-schema.ts';

const validEnqueued = trunkValidator('EnqueuedPr');

describe('the merge queue on a real git repository', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('tests each PR on top of the ones ahead and merges them in order, each as its own squashed commit', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Add b');
    await s.submit(1);
    await s.submit(2);
    await s.settle();
    const queued = (await s.queue()).enqueuedPullRequests;
    expect(queued.map((p: { prNumber: number; state: string }) => [p.prNumber, p.state])).toEqual([
      [1, 'testing'],
      [2, 'testing'],
    ]);
    for (const p of queued) expect(validEnqueued(p)).toEqual([]);
    const runs = await s.runsInProgress();
    expect(runs.map((r) => r.tested)).toEqual([[1], [2]]);
    const details = await testingDetails(s, REPO, runs[1]!.id);
    expect(details).toMatchObject({
      testBranch: expect.stringMatching(/^mainline-merge\/pr-2\//),
      testBranchSha: runs[1]!.sha,
      status: 'in_progress',
      testedPullRequests: [{ prNumber: 2, title: 'Add b' }],
      dependentPrs: [1],
    });
    await s.ci('success');
    await s.settle();
    expect(s.history()).toEqual(['Add b (#2)', 'Add a (#1)', 'Initial commit']);
    expect((await s.pr(1)).state).toBe('merged');
    expect((await s.pr(2)).state).toBe('merged');
    const done = await testingDetails(s, REPO, runs[1]!.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      statusChecks: [{ context: 'ci', state: 'SUCCESS', url: `https://ci.example/${runs[1]!.id}` }],
    });
  });

  it('ejects a PR whose tests fail, and re-tests the one behind it on the new predicted base', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Broken change');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Good change');
    await s.submit(1);
    await s.submit(2);
    await s.settle();
    await s.ci('failure', 1);
    await s.settle();
    const failed = await s.pr(1);
    expect(failed.state).toBe('failed');
    expect(failed.stateReason).toMatch(/ci/);
    const [retest] = await s.runsInProgress();
    expect(retest?.tested).toEqual([2]);
    await s.ci('success', 2);
    await s.settle();
    expect(s.history()).toEqual(['Good change (#2)', 'Initial commit']);
  });

  it('fails a PR that conflicts with the one ahead of it, with a reason', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'README.md': 'one\n' }, 'First edit');
    await s.openPr(2, { 'README.md': 'two\n' }, 'Second edit');
    await s.submit(1);
    await s.submit(2);
    await s.settle();
    await s.ci('success', 1);
    await s.settle();
    const second = await s.pr(2);
    expect(second.state).toBe('failed');
    expect(second.stateReason).toMatch(/conflict/i);
    expect(s.history()).toEqual(['First edit (#1)', 'Initial commit']);
    expect(s.fileOnMain('README.md')).toBe('one\n');
  });

  it('freezes the required statuses of .mainline.yaml into each run, and waits for all of them', async () => {
    s = await GitScenario.create(
      { directMergeMode: 'off' },
      { 'README.md': 'hi\n', '.mainline.yaml': 'merge:\n  required_statuses:\n    - build\n    - test\n' },
    );
    s.headChecks = ['build', 'test'];
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    const [run] = await s.runsInProgress();
    const details = await testingDetails(s, REPO, run!.id);
    expect(details).toMatchObject({
      requiredStatuses: ['build', 'test'],
      requiredStatusesSource: 'service_config',
    });
    await s.ci('success', 1, 'build');
    await s.settle();
    expect((await s.pr(1)).state).toBe('testing');
    await s.ci('success', 1, 'test');
    await s.settle();
    expect(s.history()[0]).toBe('Add a (#1)');
  });

  it('merges with merge_commit and rebase when the queue says so', async () => {
    s = await GitScenario.create({ directMergeMode: 'off', mergeMethod: 'merge_commit' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    await s.ci('success');
    await s.settle();
    expect(s.history()).toEqual(['Merge pull request #1: Add a', 'Initial commit']);
    expect(s.bareGit('log', '--format=%s', 'main^2')).toBe('Add a\nInitial commit');
    await s.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', mergeMethod: 'rebase' });
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Add b');
    await s.submit(2);
    await s.settle();
    await s.ci('success');
    await s.settle();
    expect(s.history().slice(0, 2)).toEqual(['Add b', 'Merge pull request #1: Add a']);
  });

  it('restarts the run when the target branch is pushed to from outside', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    const [before] = await s.runsInProgress();
    s.pushToMain({ 'hotfix.txt': 'fix\n' }, 'Hotfix');
    await s.settle();
    const [after] = await s.runsInProgress();
    expect(after?.id).not.toBe(before?.id);
    await s.ci('success');
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Hotfix', 'Initial commit']);
  });

  it('cancels a queued PR that gets new commits, with a reason', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    s.git('checkout', '-q', 'feature-1');
    s.commit({ 'a.txt': 'a2\n' }, 'More a');
    s.git('push', '-q', 'origin', 'feature-1');
    await s.settle();
    const pr = await s.pr(1);
    expect(pr.state).toBe('cancelled');
    expect(pr.stateReason).toMatch(/commit|updated|head/i);
  });

  it('pauses: a paused queue starts no test run until it runs again', async () => {
    s = await GitScenario.create({ directMergeMode: 'off', state: 'PAUSED' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    expect(await s.runsInProgress()).toEqual([]);
    expect((await s.queue()).state).toBe('paused');
    await s.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', state: 'running' });
    await s.settle();
    expect((await s.runsInProgress()).map((r) => r.tested)).toEqual([[1]]);
  });

  it('deleteQueue refuses a queue that still has PRs', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    const res = await s.post('/v1/deleteQueue', { repo: REPO, targetBranch: 'main' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/drain/);
  });

  it('answers submitting an unknown PR with 404 PR_NOT_FOUND and a bad priority with 400', async () => {
    s = await GitScenario.create();
    expect(
      (await s.post('/v1/submitPullRequest', { repo: REPO, targetBranch: 'main', pr: { number: 99 } })).json()
        .error.code,
    ).toBe('PR_NOT_FOUND');
    await s.openPr(1, { 'a.txt': 'a\n' });
    const bad = await s.post('/v1/submitPullRequest', {
      repo: REPO,
      targetBranch: 'main',
      pr: { number: 1 },
      priority: 'asap',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].path).toBe('$.priority');
  });

  it('cancels and restarts through the API, and pages through the queue’s pull requests', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    for (const n of [1, 2, 3]) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` }, `Change ${n}`);
    for (const n of [1, 2, 3]) await s.submit(n);
    await s.settle();
    const cancel = await s.post('/v1/cancelPullRequest', {
      repo: REPO,
      targetBranch: 'main',
      pr: { number: 3 },
    });
    expect(cancel.statusCode).toBe(200);
    expect(await s.pr(3)).toMatchObject({
      state: 'cancelled',
      stateReason: expect.stringMatching(/Cancelled through the API/),
      isCurrentlySubmittedToQueue: false,
    });
    const again = await s.post('/v1/cancelPullRequest', {
      repo: REPO,
      targetBranch: 'main',
      pr: { number: 3 },
    });
    expect(again.statusCode).toBe(400);
    const testing1 = async () => (await s!.runsInProgress()).find((r) => r.tested.includes(1));
    const before = await testing1();
    expect(
      (await s.post('/v1/restartTestsOnPullRequest', { repo: REPO, targetBranch: 'main', pr: { number: 1 } }))
        .statusCode,
    ).toBe(200);
    await s.settle();
    const after = await testing1();
    expect(after).toBeDefined();
    expect(after?.id).not.toBe(before?.id);

    const list = (body: object) =>
      s!.post('/v1/listPullRequests', { repo: REPO, targetBranch: 'main', ...body });
    const first = (await list({ take: 2 })).json();
    expect(first.pullRequests.map((p: { prNumber: number }) => p.prNumber)).toEqual([1, 2]);
    expect(first.nextCursor).toMatch(/^[0-9a-f-]{36}$/);
    const rest = (await list({ take: 2, cursor: first.nextCursor })).json();
    expect(rest.pullRequests.map((p: { prNumber: number }) => p.prNumber)).toEqual([3]);
    expect(rest.nextCursor).toBeUndefined();
    expect(
      (await list({ state: 'cancelled' })).json().pullRequests.map((p: { prNumber: number }) => p.prNumber),
    ).toEqual([3]);
    expect((await list({ take: 101 })).statusCode).toBe(400);
    expect((await list({ cursor: '01234567-0123-4123-8123-0123456789ab' })).statusCode).toBe(400);
  });

  it('keeps the live state to the live queue: finished PRs and runs move to the archive and still read back', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    for (const n of [1, 2, 3]) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` }, `Change ${n}`);
    for (const n of [1, 2, 3]) await s.submit(n);
    await s.settle();
    const runs = await s.runsInProgress();
    await s.ci('success');
    await s.settle();
    expect(s.history().slice(0, 3)).toEqual(['Change 3 (#3)', 'Change 2 (#2)', 'Change 1 (#1)']);
    const live = await storedQueueState(s.t.db.database.db);
    expect(live.prs.keys()).toEqual([]);
    expect(Object.keys(live.runs)).toEqual([]);
    expect(await s.pr(1)).toMatchObject({ state: 'merged', prTitle: 'Change 1' });
    const details = await testingDetails(s, REPO, runs[0]!.id);
    expect(details).toMatchObject({
      status: 'succeeded',
      testedPullRequests: [{ prNumber: 1, title: 'Change 1' }],
    });
    const listed = (
      await s.post('/v1/listPullRequests', { repo: REPO, targetBranch: 'main', state: 'merged' })
    ).json();
    expect(listed.pullRequests.map((p: { prNumber: number }) => p.prNumber)).toEqual([1, 2, 3]);
    const metrics = await s.t.app.inject({
      method: 'GET',
      url: '/v1/getMergeQueueMetrics',
      headers: { 'x-api-token': s.token },
    });
    expect(metrics.body).toContain('mq_prs_total{repo="acme/web",branch="main",state="merged"} 3');
    await s.openPr(1, { 'g1.txt': 'again\n' }, 'Change 1 again');
    await s.submit(1);
    await s.settle();
    expect((await s.pr(1)).state).toBe('testing');
  });
});
