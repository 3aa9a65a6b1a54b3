import { afterEach, describe, expect, it } from 'vitest';
import { GitRepositoryForge } from '../../src/forge/git-repository-forge.ts';
import { QueueRunner } from '../../src/runner/queue-runner.ts';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { testingDetails } from '../support/queue-api.ts';
import { repositoryRow } from '../support/reads.ts';

const silent = { info() {}, warn() {}, error() {} };

describe('merge-queue behaviours on a real git repository', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a flaky failure is cleared by a later passing run with optimistic merge', async () => {
    s = await GitScenario.create({
      directMergeMode: 'off',
      canOptimisticallyMerge: true,
      pendingFailureDepth: 1,
    });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Add b');
    await s.submit(1);
    await s.submit(2);
    await s.settle();
    const [first, second] = await s.runsInProgress();
    expect(second?.tested).toEqual([2]);
    await s.post('/v1/git/reportStatus', { repo: REPO, sha: first!.sha, context: 'ci', state: 'failure' });
    await s.settle();
    expect((await s.pr(1)).state).toBe('pending_failure');
    await s.post('/v1/git/reportStatus', { repo: REPO, sha: second!.sha, context: 'ci', state: 'success' });
    await s.settle();
    expect(s.history()).toEqual(['Add b (#2)', 'Add a (#1)', 'Initial commit']);
  });

  it('a batch of 8 with one bad PR is bisected to it; the other 7 merge', async () => {
    s = await GitScenario.create({
      directMergeMode: 'off',
      batch: true,
      batchingMinSize: 8,
      bisectionConcurrency: 2,
      concurrency: 1,
    });
    for (let n = 1; n <= 8; n++) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` }, `Change ${n}`);
    for (let n = 1; n <= 8; n++) await s.submit(n);
    await s.settle();
    const [batch] = await s.runsInProgress();
    expect(batch?.tested).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const bad = 6;
    for (let round = 0; round < 20; round++) {
      const runs = await s.runsInProgress();
      if (runs.length === 0) {
        // What bisection cleared is re-queued; fewer than the batch size wait out the batching window.
        if ((await s.queue()).enqueuedPullRequests.length === 0) break;
        s.clock += 6 * 60_000;
        await s.settle();
        continue;
      }
      for (const run of runs) {
        await s.post('/v1/git/reportStatus', {
          repo: REPO,
          sha: run.sha,
          context: 'ci',
          state: run.tested.includes(bad) ? 'failure' : 'success',
        });
      }
      await s.settle();
    }
    expect((await s.pr(bad)).state).toBe('failed');
    const merged = s.history().filter((m) => m.startsWith('Change'));
    expect(merged.sort()).toEqual([1, 2, 3, 4, 5, 7, 8].map((n) => `Change ${n} (#${n})`).sort());
  });

  it('a run that takes longer than testingTimeoutMinutes fails its PR with a reason', async () => {
    s = await GitScenario.create({ directMergeMode: 'off', testingTimeoutMinutes: 10 });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    s.clock += 11 * 60_000;
    await s.settle();
    await s.settle();
    const pr = await s.pr(1);
    expect(pr.state).toBe('failed');
    expect(pr.stateReason).toMatch(/timed out after 10 minutes/);
    expect(s.history()).toEqual(['Initial commit']);
  });

  it('drain: PRs in testing finish and merge, new ones are not started', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Add b');
    await s.submit(1);
    await s.settle();
    expect(
      (await s.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', state: 'DRAINING' })).json().state,
    ).toBe('draining');
    await s.submit(2);
    await s.settle();
    expect((await s.runsInProgress()).map((r) => r.tested)).toEqual([[1]]);
    await s.ci('success', 1);
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
    expect((await s.pr(2)).state).not.toBe('testing');
  });

  it('a mode change with a PR in flight shows switching_modes until it finishes', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    const switching = await s.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', mode: 'parallel' });
    expect(switching.json()).toMatchObject({ state: 'switching_modes' });
    await s.ci('success', 1);
    await s.settle();
    expect(await s.queue()).toMatchObject({ state: 'running', mode: 'parallel' });
    expect(s.history()[0]).toBe('Add a (#1)');
  });

  it('direct merge: an up-to-date PR with nothing ahead merges without a test run', async () => {
    s = await GitScenario.create({ directMergeMode: 'always' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
    expect(await s.runsInProgress()).toEqual([]);
  });

  it('parallel mode tests PRs with disjoint impacted targets independently', async () => {
    s = await GitScenario.create({ directMergeMode: 'off', mode: 'parallel' });
    await s.openPr(1, { 'a/x.txt': 'a\n' }, 'Change a');
    await s.openPr(2, { 'b/x.txt': 'b\n' }, 'Change b');
    for (const [n, target] of [
      [1, 'a'],
      [2, 'b'],
    ] as const) {
      const sha = s.bareGit('rev-parse', `feature-${n}`);
      const res = await s.post('/v1/setImpactedTargets', {
        repo: REPO,
        targetBranch: 'main',
        pr: { number: String(n), sha },
        impactedTargets: [target],
      });
      expect(res.statusCode).toBe(200);
      await s.submit(n);
    }
    await s.settle();
    const runs = await s.runsInProgress();
    expect(runs.map((r) => r.tested)).toEqual([[1], [2]]);
    const details = await testingDetails(s, REPO, runs[1]!.id);
    expect(details).toMatchObject({
      dependentPrs: [],
      impactedTargets: ['b'],
      impactedTargetsForTestedPrs: ['b'],
    });
    await s.ci('failure', 1);
    await s.ci('success', 2);
    await s.settle();
    expect(s.history()).toEqual(['Change b (#2)', 'Initial commit']);
  });

  it('reads queued PRs all at once exactly as one by one: moved, deleted, unknown', async () => {
    s = await GitScenario.create();
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Add b');
    await s.openPr(3, { 'c.txt': 'c\n' }, 'Add c');
    s.pushToMain({ 'm.txt': 'm\n' }, 'Main moves on');
    s.git('push', '-q', 'origin', '--delete', 'feature-3');
    const db = s.t.db.database.db;
    const row = await repositoryRow(s.t, REPO);
    const repo = { id: row.id, host: row.host, owner: row.owner, name: row.name };
    const forge = new GitRepositoryForge({ root: s.t.config.gitRoot, db });
    const numbers = [1, 2, 3, 99];
    const together = await forge.pullRequests(repo, numbers);
    const single = new Map(
      await Promise.all(numbers.map(async (n) => [n, await forge.pullRequest(repo, n)] as const)),
    );
    expect(together).toEqual(single);
    expect(together.get(1)?.headSha).toMatch(/^[0-9a-f]{40}$/);
    expect(together.get(1)?.baseSha).not.toBe(together.get(1)?.headSha);
    expect(together.get(3)).toBeNull();
    expect(together.get(99)).toBeNull();
  });

  it('one runner drives a queue at a time; another takes over once the lease of a dead one expires', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    const ctx = { db: s.t.db.database.db, config: s.t.config, now: () => s!.clock, caches: s.t.caches };
    const forge = new GitRepositoryForge({ root: s.t.config.gitRoot, db: ctx.db });
    const dead = new QueueRunner(ctx, forge, silent);
    const other = new QueueRunner(ctx, forge, silent);
    await dead.runOnce(); // takes the lease, then "crashes" without releasing it
    await s.ci('success', 1);
    await other.runOnce();
    expect(s.history()).toEqual(['Initial commit']);
    s.clock += 31_000;
    await other.runOnce();
    await other.runOnce();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
  });
});
