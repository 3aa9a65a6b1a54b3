import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitLabScenario, GL_PATH, GL_REPO } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 240_000 });

/**
 * A fast-forward GitLab project with "Pipelines must succeed" (skipped pipelines not counted): the
 * queue pushes the tested rebased head without ci.skip and has GitLab merge it, at that SHA, when the
 * head's own pipeline succeeds (auto-merge). The merge action waits meanwhile, and the runs behind go on
 * on the predicted base. Git goes over the simulator's HTTP, whose push starts that pipeline; the test
 * reports its job.
 */
describe('GitLab "Pipelines must succeed" with a rebased head: merge when the pipeline succeeds', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** Merge requests branched from main, which then moves on; their heads are green and they are queued. */
  async function queued(scenario: GitLabScenario, count: number): Promise<number[]> {
    const iids: number[] = [];
    for (let n = 1; n <= count; n++) {
      iids.push(await scenario.openMr(`f${n}`, { [`${n}.txt`]: `${n}\n` }, `Feature ${n}`));
    }
    await scenario.sim.commit(GL_PATH, 'main', { 'other.txt': 'o\n' }, { message: 'Other' });
    await scenario.sim.flush();
    for (const n of iids) await scenario.headGreen(n);
    for (const n of iids) await scenario.submit(n);
    await scenario.settle();
    return iids;
  }

  /** One merge request queued, tested and waiting on GitLab's auto-merge: its number, tested head and main's tip. */
  async function waitingMerge(
    scenario: GitLabScenario,
  ): Promise<{ one: number; tested: string; main: string | null }> {
    const [one = 0] = await queued(scenario, 1);
    const tested = await scenario.ciOnTestBranch(one, 'success');
    const main = await scenario.sim.branchHead(GL_PATH, 'main');
    await scenario.settle();
    expect((await scenario.sim.mergeRequest(GL_PATH, one))['merge_when_pipeline_succeeds']).toBe(true);
    return { one, tested, main };
  }

  /**
   * CI reports the "ci" job of a commit (joining its latest pipeline), then the queue runs; `ms` is the
   * time let pass first (0: only the webhooks can make a waiting merge look again).
   */
  async function job(sha: string, state: 'success' | 'failed', ms?: number): Promise<void> {
    await s?.sim.setStatus(GL_PATH, sha, 'ci', state);
    await s?.sim.flush();
    await s?.settle(ms);
  }

  async function create(concurrency: number): Promise<GitLabScenario> {
    return GitLabScenario.create(
      { directMergeMode: 'off', concurrency, mergeMethod: 'merge_commit' },
      { mergeMethod: 'ff', pipelinesMustSucceed: true, httpRemote: true },
    );
  }

  it('two merge requests needing a rebase both merge, each through auto-merge at exactly its tested rebased head, the second tested on the first meanwhile', async () => {
    s = await create(2);
    const [one = 0, two = 0] = await queued(s, 2);
    const tested1 = await s.ciOnTestBranch(one, 'success');
    const tested2 = await s.ciOnTestBranch(two, 'success');
    const repo = s.sim.project(GL_PATH).repo;
    expect(await repo.isAncestor(tested1, tested2), '!2 tested on !1 rebased').toBe(true);
    const main = await s.sim.branchHead(GL_PATH, 'main');
    await s.settle();
    // !1's rebased head is on its branch with auto-merge set; its pipeline has not run: nothing merged.
    let mr1 = await s.sim.mergeRequest(GL_PATH, one);
    expect(mr1['state']).toBe('opened');
    expect(mr1['sha']).toBe(tested1);
    expect(mr1['merge_when_pipeline_succeeds']).toBe(true);
    expect(mr1['head_pipeline']).toMatchObject({ sha: tested1, ref: 'f1', status: 'created' });
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(main);
    expect((await s.pr(one)).state).toBe('tests_passed');
    expect((await s.pr(two)).state).toBe('tests_passed');
    // The wait is no failed attempt and the runner does not spin on it.
    await s.settle();
    await s.settle();
    expect((await s.sim.mergeRequest(GL_PATH, one))['state']).toBe('opened');
    // !1's pipeline succeeds: GitLab merges it; the queue sees it at once (the webhook wakes the
    // waiting merge, no time passes) and merges !2 the same way.
    await job(tested1, 'success', 0);
    mr1 = await s.sim.mergeRequest(GL_PATH, one);
    expect(mr1['state']).toBe('merged');
    expect((await s.pr(one)).state).toBe('merged');
    const mr2 = await s.sim.mergeRequest(GL_PATH, two);
    expect(mr2['state']).toBe('opened');
    expect(mr2['sha']).toBe(tested2);
    expect(mr2['merge_when_pipeline_succeeds']).toBe(true);
    await job(tested2, 'success');
    expect((await s.pr(two)).state).toBe('merged');
    for (const [n, tested] of [
      [one, tested1],
      [two, tested2],
    ] as const) {
      const mr = await s.sim.mergeRequest(GL_PATH, n);
      expect(mr['state'], `!${n}`).toBe('merged');
      expect(mr['sha'], `!${n} merged the tested commit`).toBe(tested);
    }
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(tested2);
    expect(await s.sim.log(GL_PATH, 'main')).toEqual(['Feature 2', 'Feature 1', 'Other', 'Initial commit']);
  });

  it("the rebased head's pipeline fails: the merge request fails with the reason and nothing is merged", async () => {
    s = await create(1);
    const { one, tested, main } = await waitingMerge(s);
    await job(tested, 'failed');
    const pr = await s.pr(one);
    expect(pr.state).toBe('failed');
    expect(pr.stateReason).toMatch(
      /merge failed: the pipeline of [0-9a-f]{12} on f1 ended failed, and GitLab merges only after it succeeds; not merged/,
    );
    const mr = await s.sim.mergeRequest(GL_PATH, one);
    expect(mr['state']).toBe('opened');
    expect(mr['merge_when_pipeline_succeeds']).toBe(false);
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(main);
  });

  it('the target moves while the merge waits: auto-merge is withdrawn, the queued head goes back on the branch, and the merge request is tested again and merges on the new target', async () => {
    s = await create(1);
    const [one = 0] = await queued(s, 1);
    const head = (await s.sim.mergeRequest(GL_PATH, one))['sha'] as string;
    const tested = await s.ciOnTestBranch(one, 'success');
    await s.settle();
    expect((await s.sim.mergeRequest(GL_PATH, one))['merge_when_pipeline_succeeds']).toBe(true);
    await s.sim.commit(GL_PATH, 'main', { 'outside.txt': 'x\n' }, { message: 'Outside' });
    await s.sim.flush();
    await s.settle(10_000);
    let mr = await s.sim.mergeRequest(GL_PATH, one);
    expect(mr['merge_when_pipeline_succeeds']).toBe(false);
    expect(mr['sha'], 'the queued head is back').toBe(head);
    // The old rebased head's pipeline succeeding merges nothing.
    await job(tested, 'success');
    expect((await s.pr(one)).state).toBe('testing');
    const again = (await s.testBranches(one)).at(-1)?.sha ?? '';
    expect(again).not.toBe(tested);
    await job(again, 'success');
    mr = await s.sim.mergeRequest(GL_PATH, one);
    expect(mr['sha']).toBe(again);
    expect(mr['merge_when_pipeline_succeeds']).toBe(true);
    await job(again, 'success');
    expect((await s.pr(one)).state).toBe('merged');
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(again);
    expect(await s.sim.log(GL_PATH, 'main')).toEqual(['Feature 1', 'Outside', 'Other', 'Initial commit']);
  });

  it('the merge request is cancelled while the merge waits: auto-merge is withdrawn and its pipeline succeeding merges nothing', async () => {
    s = await create(1);
    const { one, tested, main } = await waitingMerge(s);
    const res = await s.post('/v1/cancelPullRequest', {
      repo: GL_REPO,
      targetBranch: 'main',
      pr: { number: one },
    });
    expect(res.statusCode, res.body).toBe(200);
    await s.settle(10_000);
    expect((await s.pr(one)).state).toBe('cancelled');
    expect((await s.sim.mergeRequest(GL_PATH, one))['merge_when_pipeline_succeeds']).toBe(false);
    await job(tested, 'success');
    expect((await s.sim.mergeRequest(GL_PATH, one))['state']).toBe('opened');
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(main);
  });

  it('a push to the source branch while the merge waits: nothing is merged, the push is kept', async () => {
    s = await create(1);
    const [one = 0] = await queued(s, 1);
    const tested = await s.ciOnTestBranch(one, 'success');
    const main = await s.sim.branchHead(GL_PATH, 'main');
    await s.settle();
    expect((await s.sim.mergeRequest(GL_PATH, one))['sha']).toBe(tested);
    const theirs = await s.sim.commit(GL_PATH, 'f1', { '1.txt': 'one, again\n' }, { message: 'Again' });
    await s.sim.flush();
    await s.settle();
    // The tested head's pipeline succeeding now merges nothing either.
    await s.sim.setStatus(GL_PATH, tested, 'ci', 'success');
    await job(theirs, 'success');
    const pr = await s.pr(one);
    expect(pr.state).toBe('failed');
    expect(pr.stateReason).toMatch(/the head of !1 is no longer [0-9a-f]{40}/);
    const mr = await s.sim.mergeRequest(GL_PATH, one);
    expect(mr['state']).toBe('opened');
    expect(mr['sha']).toBe(theirs);
    expect(await s.sim.branchHead(GL_PATH, 'f1')).toBe(theirs);
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(main);
  });
});
