import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitLabScenario, GL_PATH } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 240_000 });

const FORK = 'bob/widgets';

/**
 * Merge requests from a fork in a fast-forward project: the queue rebases what it tests and, when the
 * merge request allows commits from members who can merge (`allow_collaboration`), pushes the tested
 * rebased head to the fork's own repository (with a lease on the head it saw) and merges that SHA;
 * otherwise it cannot, and says so. The fork is a project of the simulator with its own repository,
 * reached over the simulator's git HTTP.
 */
describe('GitLab fork merge requests that need a rebase', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** A fork merge request from FORK's branch `fork-feature`, behind main, green and queued. */
  async function forkMr(scenario: GitLabScenario, allowCollaboration: boolean): Promise<number> {
    const sim = scenario.sim;
    await sim.createProject(FORK, { forkOf: GL_PATH });
    await sim.commit(FORK, 'fork-feature', { 'f.txt': 'from the fork\n' }, { message: 'From a fork' });
    const iid = await sim.openMergeRequest(GL_PATH, {
      source: 'fork-feature',
      title: 'From a fork',
      fork: FORK,
      allowCollaboration,
    });
    await sim.commit(GL_PATH, 'main', { 'other.txt': 'o\n' }, { message: 'Other' });
    await sim.flush();
    await scenario.headGreen(iid);
    await scenario.submit(iid);
    await scenario.settle();
    return iid;
  }

  it('allowing commits from members who can merge: the tested rebased head is pushed to the fork and merged', async () => {
    s = await GitLabScenario.create(
      { directMergeMode: 'off', mergeMethod: 'merge_commit' },
      { mergeMethod: 'ff', httpRemote: true },
    );
    const iid = await forkMr(s, true);
    const head = (await s.sim.mergeRequest(GL_PATH, iid))['sha'] as string;
    expect((await s.pr(iid)).state).toBe('testing');
    const tested = await s.ciOnTestBranch(iid, 'success');
    expect(tested).not.toBe(head);
    await s.settle();
    expect((await s.pr(iid)).state).toBe('merged');
    const mr = await s.sim.mergeRequest(GL_PATH, iid);
    expect(mr['state']).toBe('merged');
    expect(mr['sha']).toBe(tested);
    // Pushed to the fork's repository, not to a branch of the project.
    expect(await s.sim.branchHead(FORK, 'fork-feature')).toBe(tested);
    expect(await s.sim.branchHead(GL_PATH, 'fork-feature')).toBeNull();
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(tested);
    expect(await s.sim.log(GL_PATH, 'main')).toEqual(['From a fork', 'Other', 'Initial commit']);
  });

  it('without allow_collaboration: the merge request fails with a reason saying Mainline cannot push to the fork, which is left as it was', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { mergeMethod: 'ff', httpRemote: true });
    const iid = await forkMr(s, false);
    const head = await s.sim.branchHead(FORK, 'fork-feature');
    const pr = await s.pr(iid);
    expect(pr.state).toBe('failed');
    expect(pr.stateReason).toMatch(
      /!1 needs a rebase \(the project allows only fast-forward merges\) and comes from a fork whose branch Mainline cannot push to \("Allow commits from members who can merge to the target branch" is off\)/,
    );
    expect(await s.sim.branchHead(FORK, 'fork-feature')).toBe(head);
    expect((await s.sim.mergeRequest(GL_PATH, iid))['state']).toBe('opened');
  });
});
