import { describe, expect, it } from 'vitest';
import { createQueueState, queueStateName, step } from '../../../src/domain/queue/index.ts';
import { REQUIRED_CHECK, Scenario } from './dsl.ts';

describe('queue states', () => {
  it('paused: admits nothing, starts nothing, merges nothing; running runs still finish', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submitAll(1, 2);
    q.update({ state: 'paused' });
    expect(queueStateName(q.state)).toBe('paused');
    q.submit(3);
    q.pass(1);

    expect(q.states(1, 2, 3)).toEqual({ 1: 'tests_passed', 2: 'pending', 3: 'not_ready' });
    expect(q.merged).toEqual([]);

    q.update({ state: 'running' });
    expect(q.merged).toEqual([1]);
    expect(q.states(2, 3)).toEqual({ 2: 'testing', 3: 'pending' });
  });

  it('draining: admits nothing new, but tests and merges what is already queued', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submitAll(1, 2);
    q.update({ state: 'draining' });
    q.submit(3);
    q.pass(1);
    q.pass(2);
    expect(q.merged).toEqual([1, 2]);
    expect(q.stateOf(3)).toBe('not_ready');
    expect(queueStateName(q.state)).toBe('draining');
  });

  it('a mode change with PRs in flight shows switching_modes until they finish', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submitAll(1, 2);
    q.update({ mode: 'parallel' });
    expect(queueStateName(q.state)).toBe('switching_modes');
    expect(q.state.settings.mode).toBe('single');
    q.submit(3, { targets: ['a'] });
    expect(q.stateOf(3)).toBe('not_ready');

    q.pass(1);
    expect(q.merged).toEqual([1]);
    expect(queueStateName(q.state)).toBe('running');
    expect(q.state.settings.mode).toBe('parallel');
    // PR 2 never started and has no impacted targets: it waits for them; PR 3 has some and is tested.
    expect(q.states(2, 3)).toEqual({ 2: 'not_ready', 3: 'testing' });
  });

  it('a mode change on an idle queue applies at once', () => {
    const q = new Scenario();
    q.update({ mode: 'parallel' });
    expect(q.state.settings.mode).toBe('parallel');
    expect(queueStateName(q.state)).toBe('running');
  });
});

describe('the target branch and PRs changing underneath the queue', () => {
  it('restarts every run built on the old head when the target moves from outside', () => {
    const q = new Scenario({ settings: { concurrency: 2 } });
    q.submitAll(1, 2);
    const old = [q.runOf(1).id, q.runOf(2).id];
    q.pushToTarget('hotfix');

    expect(q.contents(q.runOf(1))).toEqual({ base: 'hotfix', ahead: [], tested: [1] });
    expect(q.contents(q.runOf(2))).toEqual({ base: 'hotfix', ahead: [1], tested: [2] });
    expect(q.asked('delete_test_branch').map((a) => a.runId)).toEqual(old);
    q.pass(1);
    q.pass(2);
    expect(q.merged).toEqual([1, 2]);
  });

  it('retests a PR that passed on the old head instead of merging it', () => {
    const q = new Scenario({ autoMerge: false, settings: { concurrency: 2 } });
    q.submitAll(1, 2);
    q.pass(1);
    q.pass(2);
    q.pushToTarget('admin-merge'); // arrives while the merge of 1 is in flight
    q.completeMerge(1);

    // The forge merged 1 onto the tip it found, admin-merge included: 2 is retested on that merge
    // (main-1), never on admin-merge alone, which lacks PR 1.
    expect(q.stateOf(2)).toBe('testing');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-1', ahead: [], tested: [2] });
    expect(q.waitingMerges).toEqual([]);
    // Had the push come after the merge, the next look at the target reports it: retested again.
    q.pushToTarget('admin-merge-after');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'admin-merge-after', ahead: [], tested: [2] });
  });

  it('does not mistake its own merges for outside pushes, whichever arrives first', () => {
    const q = new Scenario({ autoMerge: false, settings: { concurrency: 2 } });
    q.submitAll(1, 2);
    const run2 = q.runOf(2).id;
    q.pass(1);
    q.pushToTarget('main-1'); // push webhook of our own merge, before the merge result
    q.completeMerge(1);
    q.pushToTarget('main-1'); // and a duplicate after it
    expect(q.runOf(2).id).toBe(run2);
    q.pass(2);
    q.completeMerge(2);
    expect(q.merged).toEqual([1, 2]);
  });

  it('cancels a PR updated while queued, with a reason, and retests the PRs behind it', () => {
    const q = new Scenario({ settings: { concurrency: 2 } });
    q.submitAll(1, 2);
    q.pushToPr(1);
    expect(q.stateOf(1)).toBe('cancelled');
    expect(q.reasonOf(1)).toContain('new commits were pushed while queued');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [], tested: [2] });
  });

  it('cancels a PR on request and lets it be submitted again', () => {
    const q = new Scenario();
    q.submit(1);
    q.cancel(1, 'cancelled by @dev');
    expect(q.stateOf(1)).toBe('cancelled');
    expect(q.reasonOf(1)).toBe('cancelled by @dev');
    q.submit(1);
    q.pass(1);
    expect(q.merged).toEqual([1]);
  });
});

describe('priorities', () => {
  it('urgent preempts: it is tested first and the runs behind restart on top of it', () => {
    const q = new Scenario({ settings: { concurrency: 2 } });
    q.submitAll(1, 2, 3);
    q.submit(9, { priority: 'urgent' });

    expect(q.contents(q.runOf(9))).toEqual({ base: 'main-0', ahead: [], tested: [9] });
    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-0', ahead: [9], tested: [1] });
    expect(q.stateOf(2)).toBe('pending');
    q.pass(9);
    q.pass(1);
    q.pass(2);
    q.pass(3);
    expect(q.merged).toEqual([9, 1, 2, 3]);
  });

  it('urgent behind a PR whose merge is in flight: the run right behind it restarts in that same step', () => {
    // The step finds #2's run current first, then admits #9 at #2's own index (behind #1, which passed
    // and is merging). A check kept from earlier in the step must not survive a change at that index:
    // the state the step returns (what is saved) never holds a run missing a PR queued ahead of it.
    const q = new Scenario({ settings: { concurrency: 2 }, autoMerge: false });
    q.submitAll(1, 2);
    const run2 = q.runOf(2).id;
    q.pass(1);
    expect(q.waitingMerges.map((m) => m.prNumber)).toEqual([1]);
    const pr9 = { number: 9, title: 'PR 9', author: 'dev', headSha: q.head(9), baseSha: 'old-main' };
    const { state } = step(
      q.state,
      {
        type: 'pr_submitted',
        pr: { ...pr9, baseBranch: 'main', mergeability: 'mergeable' },
        priority: 'urgent',
        checks: [{ name: REQUIRED_CHECK, outcome: 'passed' }],
      },
      q.now,
    );

    expect(state.order).toEqual([1, 9, 2]);
    expect(state.runs[run2]?.status).toBe('cancelled');
    const runOf = (n: number) => state.runs[state.prs.get(n)?.runId ?? ''];
    expect(runOf(9)).toMatchObject({ dependsOn: [1], tested: [9] });
    expect(runOf(2)).toMatchObject({ dependsOn: [1, 9], tested: [2] });
  });

  it('high priority overtakes pending PRs but never interrupts running ones', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submitAll(1, 2);
    const run1 = q.runOf(1).id;
    q.submit(3, { priority: 'high' });
    expect(q.runOf(1).id).toBe(run1);
    q.pass(1);
    q.pass(3);
    q.pass(2);
    expect(q.merged).toEqual([1, 3, 2]);
  });
});

describe('direct merge', () => {
  it('always: merges an up-to-date PR directly when nothing is queued ahead', () => {
    const q = new Scenario({ settings: { directMergeMode: 'always' } });
    q.submit(1, { baseSha: 'main-0' });
    expect(q.merged).toEqual([1]);
    expect(q.asked('create_test_run')).toEqual([]);
    expect(q.asked('merge_pr')).toEqual([expect.objectContaining({ prNumber: 1, direct: true })]);
    expect(q.reasonOf(1)).toContain('merged directly');
  });

  it('always: queues a PR that is behind the target, or one with PRs ahead of it', () => {
    const q = new Scenario({ settings: { directMergeMode: 'always' } });
    q.submit(1);
    q.submit(2, { baseSha: 'main-0' });
    expect(q.states(1, 2)).toEqual({ 1: 'testing', 2: 'testing' });
  });

  it('always: never merges a PR whose own required checks have not passed on its head', () => {
    const q = new Scenario({ settings: { directMergeMode: 'always' } });
    q.submit(1, { baseSha: 'main-0', headCheck: 'none' });
    expect(q.merged).toEqual([]);
    expect(q.stateOf(1)).toBe('not_ready');
    expect(q.reasonOf(1)).toBe('waiting for required checks to pass on its head pr1-v1: ci');
    q.headCi(1, 'failed');
    expect(q.reasonOf(1)).toContain('required checks failed on its head pr1-v1: ci');
    q.headCi(1, 'passed');
    expect(q.asked('merge_pr')).toEqual([expect.objectContaining({ prNumber: 1, direct: true })]);
    expect(q.merged).toEqual([1]);
  });

  it('is the default for a new queue no longer: off', () => {
    expect(createQueueState({ branch: 'main', targetHead: 'x', idSeed: 's' }).settings.directMergeMode).toBe(
      'off',
    );
  });

  it('off: tests even an up-to-date PR', () => {
    const q = new Scenario({ settings: { directMergeMode: 'off' } });
    q.submit(1, { baseSha: 'main-0' });
    expect(q.stateOf(1)).toBe('testing');
  });
});

describe('readiness', () => {
  it('waits for the required checks on the PR head; results on any other commit never count', () => {
    const q = new Scenario();
    q.submit(1, { headCheck: 'pending' });
    q.headCi(1, 'passed', 'some-other-sha');
    expect(q.stateOf(1)).toBe('not_ready');
    q.headCi(1, 'passed');
    expect(q.stateOf(1)).toBe('testing');
  });

  it('a new head needs its own checks: those of the old head are dropped', () => {
    const q = new Scenario();
    q.update({ state: 'paused' });
    q.submit(1);
    expect(q.reasonOf(1)).toBe('ready; waiting while the queue is paused');
    q.pushToPr(1);
    expect(q.stateOf(1)).toBe('cancelled');
    q.update({ state: 'running' });
    q.send({
      type: 'pr_submitted',
      pr: {
        number: 1,
        title: 'PR 1',
        author: 'dev',
        headSha: q.head(1),
        baseSha: 'old-main',
        baseBranch: 'main',
        mergeability: 'mergeable',
      },
    });
    q.headCi(1, 'passed', 'pr1-v1');
    expect(q.stateOf(1)).toBe('not_ready');
    expect(q.reasonOf(1)).toContain('waiting for required checks to pass on its head pr1-v2');
    q.headCi(1, 'passed');
    expect(q.stateOf(1)).toBe('testing');
  });

  it('admits nothing while the queue has no required statuses, and says so', () => {
    const q = new Scenario({ settings: { directMergeMode: 'always' } });
    q.send({ type: 'required_statuses_discovered', branchProtection: null });
    q.submit(1, { baseSha: 'main-0' });
    expect(q.merged).toEqual([]);
    expect(q.stateOf(1)).toBe('not_ready');
    expect(q.reasonOf(1)).toContain('has no required statuses');
    q.update({ requiredStatuses: ['ci'] });
    q.headCi(1, 'passed');
    expect(q.merged).toEqual([1]);
  });

  it('sends pending PRs back to not_ready when the required statuses are removed', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submitAll(1, 2);
    expect(q.states(1, 2)).toEqual({ 1: 'testing', 2: 'pending' });
    q.send({ type: 'required_statuses_discovered', branchProtection: [] });
    expect(q.states(1, 2)).toEqual({ 1: 'testing', 2: 'not_ready' });
    expect(q.reasonOf(2)).toContain('has no required statuses');
    q.pass(1);
    expect(q.merged).toEqual([1]);
  });
});
