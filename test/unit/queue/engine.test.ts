import { describe, expect, it } from 'vitest';
import { outstandingActions, parsePriority, step } from '../../../src/domain/queue/index.ts';
import { Scenario } from './dsl.ts';

describe('engine contract', () => {
  it('is deterministic: the same state, event and time give the same result', () => {
    const q = new Scenario();
    q.submitAll(1, 2);
    const event = {
      type: 'ci_reported' as const,
      runId: q.runOf(1).id,
      checks: [{ name: 'ci', outcome: 'passed' as const }],
    };
    expect(step(q.state, event, q.now)).toEqual(step(q.state, event, q.now));
  });

  it('repeats unfinished requests after a crash: builds in progress and the merge in flight', () => {
    const q = new Scenario({ autoMerge: false, settings: { concurrency: 2 } });
    q.submitAll(1, 2);
    q.pass(1);
    const restarted = outstandingActions(q.state);
    expect(restarted).toEqual([
      expect.objectContaining({ type: 'merge_pr', prNumber: 1, expectedHeadSha: 'pr1-v1' }),
    ]);

    const checks = [{ name: 'ci', outcome: 'passed' as const }];
    const crashed = step(q.state, { type: 'pr_submitted', pr: { ...prSnapshot(3) }, checks }, q.now).state;
    expect(outstandingActions(crashed)).toContainEqual(
      expect.objectContaining({ type: 'create_test_run', testedPrs: [3] }),
    );
  });

  it('ignores duplicate and late results', () => {
    const q = new Scenario();
    q.submit(1);
    const run = q.runOf(1).id;
    q.pass(1);
    expect(q.report(run, 'failed')).toEqual([]);
    expect(q.send({ type: 'merge_succeeded', prNumber: 1, newTargetSha: 'main-1' })).toEqual([]);
    expect(q.send({ type: 'test_branch_built', runId: 'unknown', sha: 'x' })).toEqual([]);
    expect(q.merged).toEqual([1]);
  });

  it('finds the not_ready PRs again in a state whose PR map was written after the step returned it', () => {
    // step keeps the busy and not_ready PRs of the state it returns, for a step on that state; a map
    // written since (an entry added) must be walked again, or the PR added is never admitted.
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submit(1);
    const checks = [{ name: 'ci', outcome: 'passed' as const }];
    const waiting = { ...prSnapshot(3), mergeability: 'in_progress' as const };
    const added = step(q.state, { type: 'pr_submitted', pr: waiting, checks }, q.now).state.prs.get(3);
    expect(added?.state).toBe('not_ready');
    const state = step(q.state, { type: 'tick' }, q.now).state;
    state.prs.set(3, { ...(added as NonNullable<typeof added>), mergeability: 'mergeable' });
    const after = step(state, { type: 'tick' }, q.now).state;
    expect(after.prs.get(3)?.state).toBe('pending');
    expect(after.order).toEqual([1, 3]);
  });

  it('accepts priorities by name or number, 0 highest', () => {
    expect(parsePriority('urgent')).toEqual({ value: 0, name: 'urgent', usedDefault: false });
    expect(parsePriority(undefined)).toEqual({ value: 100, name: 'medium', usedDefault: true });
    expect(parsePriority(10)).toEqual({ value: 10, name: 'high', usedDefault: false });
    expect(parsePriority(300).value).toBe(255);
  });

  it('keeps the history of state changes with reasons', () => {
    const q = new Scenario();
    q.submit(1);
    q.fail(1);
    expect(q.state.prs.get(1)?.history.map((h) => h.state)).toEqual([
      'not_ready',
      'pending',
      'testing',
      'pending_failure',
      'failed',
    ]);
  });
});

function prSnapshot(n: number) {
  return {
    number: n,
    title: `PR ${n}`,
    author: 'dev',
    headSha: `pr${n}-v1`,
    baseSha: 'old',
    baseBranch: 'main',
    mergeability: 'mergeable' as const,
  };
}
