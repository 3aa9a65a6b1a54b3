import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitLabScenario, GL_PATH, GL_REPO } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 180_000 });

const queue = { repo: GL_REPO, targetBranch: 'main' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('a GitLab queue through every v1 merge endpoint and the dashboard', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('getQueue, submit/cancel, getSubmittedPullRequest, listPullRequests, getMergeQueueTestingDetails (the merge request on GitLab linked), pause/resume and the queue and run pages', async () => {
    // Git goes over the simulator's HTTP here, with the token as credentials, as on a real GitLab.
    s = await GitLabScenario.create({ directMergeMode: 'off', concurrency: 1 }, { httpRemote: true });
    const one = await s.openMr('one', { '1.txt': '1\n' }, 'One');
    const two = await s.openMr('two', { '2.txt': '2\n' }, 'Two');
    for (const n of [one, two]) await s.headGreen(n);
    for (const n of [one, two]) await s.submit(n);
    await s.settle();

    const q = (await s.post('/v1/getQueue', queue)).json();
    expect(q).toMatchObject({ state: 'running', requiredStatuses: ['ci'] });
    expect(q.enqueuedPullRequests.map((p: { prNumber: number }) => p.prNumber)).toEqual([one, two]);

    const submitted = await s.pr(one);
    expect(submitted).toMatchObject({
      prNumber: one,
      prTitle: 'One',
      prBaseBranch: 'main',
      state: 'testing',
    });
    expect(submitted.prSha).toBe((await s.sim.mergeRequest(GL_PATH, one))['sha']);

    expect(await s.listPrs()).toEqual(
      expect.arrayContaining([
        { number: one, state: 'testing' },
        { number: two, state: 'pending' },
      ]),
    );

    const [runId] = await s.runsOf(one);
    const details = await s.testingDetails(runId);
    const { branch, sha } = await s.testBranch(one);
    expect(details).toMatchObject({
      status: 'in_progress',
      testBranch: branch,
      testBranchSha: sha,
      requiredStatuses: ['ci'],
      requiredStatusesSource: 'service_config',
      // GitLab's own page of the merge request, as a GitHub pull request links to github.com.
      testedPullRequests: [
        { prNumber: one, title: 'One', prUrl: `${s.sim.url}/${GL_PATH}/-/merge_requests/${one}` },
      ],
    });

    // The dashboard shows the queue and the run, the merge request linked on GitLab.
    const signIn = await s.t.app.inject({
      method: 'POST',
      url: '/login',
      headers: FORM,
      payload: new URLSearchParams({ token: s.token }).toString(),
    });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0] as string;
    const base = `/acme/repos/gitlab.com/${GL_PATH}/queues/main`;
    const page = await s.t.app.inject({ method: 'GET', url: base, headers: { cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`href="${base}/prs/${one}"`);
    expect(page.body).toContain(`href="${base}/runs/${runId}"`);
    expect(page.body).toMatch(/In the queue \(2\)/);
    const runPage = await s.t.app.inject({
      method: 'GET',
      url: `${base}/runs/${runId}`,
      headers: { cookie },
    });
    expect(runPage.statusCode).toBe(200);
    expect(runPage.body).toContain(`href="${s.sim.url}/${GL_PATH}/-/merge_requests/${one}"`);
    expect(runPage.body).toContain(sha);

    // Cancel takes !2 out; !1 merges; pause holds a resubmitted !2 until the queue is resumed.
    const cancelled = await s.post('/v1/cancelPullRequest', { ...queue, pr: { number: two } });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect((await s.pr(two)).state).toBe('cancelled');
    await s.ciOnTestBranch(one, 'success');
    await s.settle();
    expect((await s.pr(one)).state).toBe('merged');
    const paused = await s.post('/v1/updateQueue', { ...queue, state: 'paused' });
    expect(paused.json()).toMatchObject({ state: 'paused' });
    await s.submit(two);
    await s.settle();
    expect(await s.testBranches(two)).toEqual([]);
    expect((await s.post('/v1/updateQueue', { ...queue, state: 'running' })).json()).toMatchObject({
      state: 'running',
    });
    await s.settle();
    expect((await s.pr(two)).state).toBe('testing');
    await s.ciOnTestBranch(two, 'success');
    await s.settle();
    expect((await s.pr(two)).state).toBe('merged');
    expect((await s.post('/v1/getQueue', queue)).json().enqueuedPullRequests).toEqual([]);
    // Fetches and pushes went over HTTP and were let in by the token.
    const git = s.sim.requests.filter((r) => /\.git\//.test(r.path));
    expect(git.some((r) => r.path.endsWith('/git-receive-pack') && r.status === 200)).toBe(true);
    expect(git.filter((r) => r.status === 401)).toEqual([]);
  });
});
