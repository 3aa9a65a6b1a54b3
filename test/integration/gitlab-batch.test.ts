import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitLabScenario, GL_PATH, GL_REPO } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 300_000 });

describe('batching and draining on GitLab', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a batch of 4 with one bad merge request is bisected to it; the other 3 merge', async () => {
    s = await GitLabScenario.create({
      directMergeMode: 'off',
      batch: true,
      batchingMinSize: 4,
      bisectionConcurrency: 2,
      concurrency: 1,
    });
    const iids: number[] = [];
    for (let n = 1; n <= 4; n++)
      iids.push(await s.openMr(`b${n}`, { [`f${n}.txt`]: `${n}\n` }, `Change ${n}`));
    for (const n of iids) await s.headGreen(n);
    for (const n of iids) await s.submit(n);
    await s.settle();
    const repo = s.sim.project(GL_PATH).repo;
    /** The merge requests a test branch holds: their files are in its commit. */
    const tested = async (sha: string) => {
      const out: number[] = [];
      for (const n of iids) if ((await repo.showFile(sha, `f${n}.txt`)) !== null) out.push(n);
      return out;
    };
    const first = await s.allTestBranches();
    expect(first).toHaveLength(1);
    expect(await tested(first[0]?.sha ?? '')).toEqual(iids);
    const bad = iids[2] as number;
    const reported = new Set<string>();
    for (let round = 0; round < 20; round++) {
      const branches = (await s.allTestBranches()).filter((b) => !reported.has(b.sha));
      if (branches.length === 0) {
        const queued = (await s.listPrs()).filter((p) => p.state === 'pending' || p.state === 'testing');
        if (queued.length === 0) break;
        // What bisection cleared is re-queued; fewer than the batch size wait out the batching window.
        s.clock += 6 * 60_000;
        await s.settle();
        continue;
      }
      for (const b of branches) {
        reported.add(b.sha);
        await s.sim.setStatus(
          GL_PATH,
          b.sha,
          'ci',
          (await tested(b.sha)).includes(bad) ? 'failed' : 'success',
        );
      }
      await s.sim.flush();
      await s.settle();
    }
    expect((await s.pr(bad)).state).toBe('failed');
    for (const n of iids.filter((x) => x !== bad)) {
      expect((await s.pr(n)).state, `!${n}`).toBe('merged');
      expect((await s.sim.mergeRequest(GL_PATH, n))['state']).toBe('merged');
    }
    expect(await repo.showFile('refs/heads/main', `f${bad}.txt`)).toBeNull();
  });

  it('drain: the merge request in testing finishes and merges, a new one is not started', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' });
    const one = await s.openMr('one', { 'a.txt': 'a\n' }, 'Add a');
    const two = await s.openMr('two', { 'b.txt': 'b\n' }, 'Add b');
    for (const n of [one, two]) await s.headGreen(n);
    await s.submit(one);
    await s.settle();
    const drained = await s.post('/v1/updateQueue', {
      repo: GL_REPO,
      targetBranch: 'main',
      state: 'DRAINING',
    });
    expect(drained.json().state).toBe('draining');
    await s.submit(two);
    await s.settle();
    expect(await s.testBranches(two)).toEqual([]);
    await s.ciOnTestBranch(one, 'success');
    await s.settle();
    expect((await s.pr(one)).state).toBe('merged');
    expect((await s.pr(two)).state).not.toBe('testing');
    expect(await s.testBranches(two)).toEqual([]);
  });
});
