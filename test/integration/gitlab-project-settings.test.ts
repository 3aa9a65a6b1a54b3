import { afterEach, describe, expect, it, vi } from 'vitest';
import { GITLAB_STATUS_NAME, NOTE_MARKER } from '../../src/forge/gitlab/report.ts';
import { PIPELINE_STATUS_NAME } from '../../src/forge/gitlab/statuses.ts';
import { GitLabScenario, GL_PATH, GL_REPO } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 180_000 });

const queue = { repo: GL_REPO, targetBranch: 'main' };

describe("the GitLab project's own settings", () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('"Pipelines must succeed" without .mainline.yaml: the pipeline\'s overall status on the test branch is the required status, reported as the provider\'s rule', async () => {
    s = await GitLabScenario.create(
      { directMergeMode: 'off' },
      { files: { 'README.md': 'hi\n' }, pipelinesMustSucceed: true },
    );
    const iid = await s.openMr('feature', { 'f.txt': 'f\n' }, 'Feature');
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    expect((await s.pr(iid)).state).toBe('testing');
    const [run] = await s.runsOf(iid);
    const details = await s.testingDetails(run);
    expect(details).toMatchObject({
      requiredStatuses: [PIPELINE_STATUS_NAME],
      requiredStatusesSource: 'repo_provider_branch_protection',
    });
    // One job fails while another passes: the pipeline failed, so the run fails.
    const { sha } = await s.testBranch(iid);
    await s.sim.setStatus(GL_PATH, sha, 'lint', 'success');
    await s.sim.setStatus(GL_PATH, sha, 'unit', 'failed');
    await s.sim.flush();
    await s.settle();
    expect((await s.pr(iid)).state).toBe('failed');
    const failed = await s.testingDetails(run);
    expect(failed.statusChecks).toContainEqual(
      expect.objectContaining({ context: PIPELINE_STATUS_NAME, state: 'FAILURE' }),
    );
    // Mainline sets no commit status of its own on the head: a pending one would hold up the
    // head's pipeline, and GitLab would refuse the merge.
    const head = (await s.sim.mergeRequest(GL_PATH, iid))['sha'] as string;
    expect(s.sim.statuses(GL_PATH, head).map((x) => x.name)).not.toContain(GITLAB_STATUS_NAME);
    // Submitted again, its pipeline passes and it merges.
    await s.submit(iid);
    await s.settle();
    const again = (await s.testBranches(iid)).at(-1);
    await s.sim.setStatus(GL_PATH, again?.sha ?? '', 'unit', 'success');
    await s.sim.flush();
    await s.settle();
    expect((await s.pr(iid)).state).toBe('merged');
    expect((await s.sim.mergeRequest(GL_PATH, iid))['state']).toBe('merged');
  });

  it('"Pipelines must succeed" with .mainline.yaml naming jobs: the file wins, as it does over GitHub branch protection', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { pipelinesMustSucceed: true });
    const res = await s.post('/v1/getQueue', queue);
    expect(res.statusCode, res.body).toBe(200);
    const iid = await s.openMr('feature', { 'f.txt': 'f\n' }, 'Feature');
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    const [run] = await s.runsOf(iid);
    const details = await s.testingDetails(run);
    expect(details).toMatchObject({ requiredStatuses: ['ci'], requiredStatusesSource: 'service_config' });
  });

  it('MAINLINE_GITLAB_CREATE_PIPELINES: the test branch is pushed with ci.skip and its pipeline created through the API, whose jobs decide the run', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { createPipelines: true });
    const iid = await s.openMr('feature', { 'f.txt': 'f\n' }, 'Feature');
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    const { branch, sha } = await s.testBranch(iid);
    expect(s.sim.createdPipelines(GL_PATH)).toEqual([
      expect.objectContaining({ ref: branch, sha, source: 'api' }),
    ]);
    await s.ciOnTestBranch(iid, 'success');
    await s.settle();
    expect((await s.pr(iid)).state).toBe('merged');
  });

  it('MAINLINE_GITLAB_CREATE_PIPELINES naming projects: only those get their pipelines through the API; another project is pushed without ci.skip', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { createPipelines: ['acme/other'] });
    const iid = await s.openMr('feature', { 'f.txt': 'f\n' }, 'Feature');
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    expect(s.sim.createdPipelines(GL_PATH)).toEqual([]);
    await s.close();
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { createPipelines: [GL_PATH] });
    const again = await s.openMr('feature', { 'f.txt': 'f\n' }, 'Feature');
    await s.headGreen(again);
    await s.submit(again);
    await s.settle();
    const { branch, sha } = await s.testBranch(again);
    expect(s.sim.createdPipelines(GL_PATH)).toEqual([
      expect.objectContaining({ ref: branch, sha, source: 'api' }),
    ]);
  });

  it('fast-forward only: the test branch is the head itself when it is on main, which then ends exactly at the tested commit; a merge request left behind is rebased, tested and merged at that rebased commit', async () => {
    s = await GitLabScenario.create(
      { directMergeMode: 'off', concurrency: 1, mergeMethod: 'merge_commit' },
      { mergeMethod: 'ff' },
    );
    const one = await s.openMr('one', { '1.txt': '1\n' }, 'One');
    const two = await s.openMr('two', { '2.txt': '2\n' }, 'Two');
    const head = (await s.sim.mergeRequest(GL_PATH, one))['sha'] as string;
    await s.headGreen(one);
    await s.submit(one);
    await s.settle();
    // The test branch was the head itself (no merge commit on top, which GitLab would never make),
    // so the head's passed pipeline proved it at once.
    expect((await s.pr(one)).state).toBe('merged');
    const [run] = await s.runsOf(one);
    const details = await s.testingDetails(run);
    expect(details.testBranchSha).toBe(head);
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(head);
    await s.headGreen(two);
    // !2 was branched before !1 merged: GitLab would not fast-forward it (406), so the queue tests it
    // rebased on main and, once that passed, makes the rebased commit its head and merges it.
    await s.submit(two);
    await s.settle();
    expect((await s.pr(two)).state).toBe('testing');
    const tested = await s.ciOnTestBranch(two, 'success');
    expect(await s.sim.project(GL_PATH).repo.parents(tested)).toEqual([head]);
    await s.settle();
    expect((await s.pr(two)).state).toBe('merged');
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(tested);
    expect((await s.sim.mergeRequest(GL_PATH, two))['sha']).toBe(tested);
  });

  it("stacked merge requests: with fast-forward both are tested in one run as the last head and main ends exactly at it; with semi-linear history the second is tested rebased on the first one's merge and merged with that tree", async () => {
    for (const mergeMethod of ['ff', 'rebase_merge'] as const) {
      s = await GitLabScenario.create(
        { directMergeMode: 'off', concurrency: 2, mergeMethod: 'merge_commit' },
        { mergeMethod },
      );
      const one = await s.openMr('one', { '1.txt': '1\n' }, 'One');
      await s.sim.commit(GL_PATH, 'two', { '2.txt': '2\n' }, { from: 'one', message: 'Two' });
      const two = await s.sim.openMergeRequest(GL_PATH, { source: 'two', title: 'Two' });
      await s.sim.flush();
      const last = (await s.sim.mergeRequest(GL_PATH, two))['sha'] as string;
      for (const n of [one, two]) await s.headGreen(n);
      for (const n of [one, two]) await s.submit(n);
      await s.settle();
      expect((await s.pr(one)).state, mergeMethod).toBe('merged');
      if (mergeMethod === 'ff') {
        // !2's run was its own head, already passed: it merges and main is exactly that commit.
        expect((await s.pr(two)).state).toBe('merged');
        expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(last);
      } else {
        // !1's merge commit is on main now, which !2 does not descend from: it was tested rebased
        // on the merge commit predicted for !1, and merges rebased on GitLab's, with the tested tree.
        expect((await s.pr(two)).state).toBe('testing');
        const tested = await s.ciOnTestBranch(two, 'success');
        await s.settle();
        expect((await s.pr(two)).state).toBe('merged');
        const repo = s.sim.project(GL_PATH).repo;
        expect(await repo.tree('refs/heads/main')).toBe(await repo.tree(tested));
        expect(await repo.tree('refs/heads/main')).toBe(await repo.tree(last));
        expect(await s.sim.log(GL_PATH, 'main')).toHaveLength(3);
      }
      await s.close();
      s = undefined;
    }
  });

  it('approvals required: an unapproved merge request is not admitted and its note says so; once approved it is tested and merged', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { approvalsRequired: 1 });
    const iid = await s.openMr('feature', { 'f.txt': 'f\n' }, 'Feature');
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    expect((await s.pr(iid)).state).toBe('not_ready');
    expect(await s.testBranches(iid)).toEqual([]);
    const note = s.sim.notes(GL_PATH, iid).find((n) => n.body.startsWith(NOTE_MARKER));
    expect(note?.body).toContain('1 more approval required');
    await s.sim.approve(GL_PATH, iid, 'reviewer');
    await s.sim.flush();
    await s.settle();
    expect((await s.pr(iid)).state).toBe('testing');
    await s.ciOnTestBranch(iid, 'success');
    await s.settle();
    expect((await s.pr(iid)).state).toBe('merged');
  });
});
