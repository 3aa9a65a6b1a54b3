import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitLabScenario, GL_PATH } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 180_000 });

describe('timeout, optimistic merge and direct merge on GitLab', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a run whose pipeline never reports fails its merge request after testingTimeoutMinutes; nothing is merged', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off', testingTimeoutMinutes: 10 });
    const iid = await s.openMr('slow', { 's.txt': 's\n' }, 'Slow');
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    expect((await s.pr(iid)).state).toBe('testing');
    s.clock += 11 * 60_000;
    await s.settle();
    await s.settle();
    const pr = await s.pr(iid);
    expect(pr.state).toBe('failed');
    expect(pr.stateReason).toMatch(/timed out after 10 minutes/);
    expect((await s.sim.mergeRequest(GL_PATH, iid))['state']).toBe('opened');
    expect(await s.sim.project(GL_PATH).repo.showFile('refs/heads/main', 's.txt')).toBeNull();
    // The test branch is gone from GitLab once its run ended.
    expect(await s.testBranches(iid)).toEqual([]);
  });

  it('optimistic merge: a later passing run that holds an earlier failed merge request proves it; both merge in order', async () => {
    s = await GitLabScenario.create({
      directMergeMode: 'off',
      canOptimisticallyMerge: true,
      pendingFailureDepth: 1,
      concurrency: 2,
    });
    const one = await s.openMr('one', { 'a.txt': 'a\n' }, 'Add a');
    const two = await s.openMr('two', { 'b.txt': 'b\n' }, 'Add b');
    for (const n of [one, two]) await s.headGreen(n);
    for (const n of [one, two]) await s.submit(n);
    await s.settle();
    // !2's run is built on top of !1's.
    const second = await s.testBranch(two);
    expect(await s.sim.project(GL_PATH).repo.showFile(second.sha, 'a.txt')).toBe('a\n');
    await s.ciOnTestBranch(one, 'failed');
    await s.settle();
    expect((await s.pr(one)).state).toBe('pending_failure');
    await s.sim.setStatus(GL_PATH, second.sha, 'ci', 'success');
    await s.sim.flush();
    await s.settle();
    expect((await s.pr(one)).state).toBe('merged');
    expect((await s.pr(two)).state).toBe('merged');
    expect((await s.sim.mergeRequest(GL_PATH, one))['state']).toBe('merged');
    expect((await s.sim.mergeRequest(GL_PATH, two))['state']).toBe('merged');
    const main = await s.sim.log(GL_PATH, 'main');
    expect(main.filter((m) => m.startsWith('Merge branch'))).toEqual([
      "Merge branch 'two' into 'main'",
      "Merge branch 'one' into 'main'",
    ]);
  });

  it('direct merge: an up-to-date merge request with nothing ahead is merged at its tested head without a test branch', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'always' });
    const iid = await s.openMr('direct', { 'd.txt': 'd\n' }, 'Direct');
    await s.headGreen(iid);
    const head = (await s.sim.mergeRequest(GL_PATH, iid))['sha'];
    await s.submit(iid);
    await s.settle();
    expect((await s.pr(iid)).state).toBe('merged');
    expect(await s.allTestBranches()).toEqual([]);
    const merge = s.sim.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/merge'));
    expect(merge.map((r) => r.status)).toEqual([200]);
    expect((await s.sim.mergeRequest(GL_PATH, iid))['sha']).toBe(head);
    expect(await s.sim.project(GL_PATH).repo.showFile('refs/heads/main', 'd.txt')).toBe('d\n');
  });
});
