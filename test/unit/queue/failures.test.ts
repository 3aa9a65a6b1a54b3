import { describe, expect, it } from 'vitest';
import { Scenario } from './dsl.ts';

describe('failures in single mode', () => {
  it('ejects a failing PR and retests the PRs behind it on the new predicted base', () => {
    const q = new Scenario({ settings: { concurrency: 3 } });
    q.submitAll(1, 2, 3);
    const oldRuns = [q.runOf(2).id, q.runOf(3).id];

    q.fail(1);

    expect(q.stateOf(1)).toBe('failed');
    expect(q.reasonOf(1)).toContain('required checks failed: ci');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [], tested: [2] });
    expect(q.contents(q.runOf(3))).toEqual({ base: 'main-0', ahead: [2], tested: [3] });
    expect(q.asked('delete_test_branch').filter((a) => oldRuns.includes(a.runId))).toEqual(
      oldRuns.map((runId) => expect.objectContaining({ runId, cancelCi: true })),
    );

    q.pass(2);
    q.pass(3);
    expect(q.merged).toEqual([2, 3]);
  });

  it('keeps a failed PR in pending_failure while a PR ahead of it is unresolved, then retests it', () => {
    const q = new Scenario({ settings: { concurrency: 2 } });
    q.submitAll(1, 2);
    q.fail(2);
    expect(q.stateOf(2)).toBe('pending_failure');

    q.fail(1);
    expect(q.stateOf(1)).toBe('failed');
    expect(q.stateOf(2)).toBe('testing');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [], tested: [2] });
    q.pass(2);
    expect(q.merged).toEqual([2]);
  });

  it('fails a PR that conflicts while its test branch is built, and carries on without it', () => {
    const q = new Scenario({ settings: { concurrency: 3 } });
    q.conflicts.add(2);
    q.submitAll(1, 2, 3);

    expect(q.stateOf(2)).toBe('pending_failure');
    q.pass(1);
    expect(q.stateOf(2)).toBe('failed');
    expect(q.reasonOf(2)).toContain('merge conflict merging PR #2');
    expect(q.contents(q.runOf(3))).toEqual({ base: 'main-0', ahead: [1], tested: [3] });
    q.pass(3);
    expect(q.merged).toEqual([1, 3]);
  });

  it('fails a PR when its merge is refused and retests the PRs behind it', () => {
    const q = new Scenario({ autoMerge: false });
    q.submitAll(1, 2);
    q.pass(1);
    q.pass(2);
    q.failMerge(1, 'head branch was modified');
    expect(q.stateOf(1)).toBe('failed');
    expect(q.reasonOf(1)).toBe('merge failed: head branch was modified');
    expect(q.stateOf(2)).toBe('testing');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [], tested: [2] });
  });

  it('times out a run after testingTimeoutMinutes and fails the PR with the reason', () => {
    const q = new Scenario({ settings: { testingTimeoutMinutes: 60 } });
    q.submitAll(1, 2);
    const run = q.runOf(1).id;
    q.tick(59);
    expect(q.stateOf(1)).toBe('testing');

    q.tick(1);
    expect(q.stateOf(1)).toBe('failed');
    expect(q.reasonOf(1)).toContain('testing timed out after 60 minutes waiting for ci');
    expect(q.state.runs[run]?.status).toBe('cancelled');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [], tested: [2] });
  });

  it('restarts a PR on request with a new run', () => {
    const q = new Scenario();
    q.submit(1);
    const first = q.runOf(1).id;
    q.send({ type: 'pr_restart_requested', prNumber: 1 });
    expect(q.runOf(1).id).not.toBe(first);
    expect(q.asked('delete_test_branch')).toEqual([
      expect.objectContaining({ runId: first, cancelCi: true }),
    ]);
  });
});

describe('pending failure depth and optimistic merge', () => {
  it('clears a flaky failure when a later run containing the PR passes (canOptimisticallyMerge)', () => {
    const q = new Scenario({
      settings: { concurrency: 3, pendingFailureDepth: 1, canOptimisticallyMerge: true },
    });
    q.submitAll(1, 2, 3);
    q.fail(1);
    expect(q.stateOf(1)).toBe('pending_failure');

    q.pass(2);
    expect(q.stateOf(1)).toBe('merged');
    expect(q.merged).toEqual([1, 2]);
    q.pass(3);
    expect(q.merged).toEqual([1, 2, 3]);
  });

  it('merges every PR ahead of a passing run with optimistic merge, without waiting for their runs', () => {
    const q = new Scenario({ settings: { concurrency: 3, canOptimisticallyMerge: true } });
    q.submitAll(1, 2, 3);
    const stillRunning = q.runOf(1).id;
    q.pass(3);
    expect(q.merged).toEqual([1, 2, 3]);
    expect(q.asked('delete_test_branch')).toContainEqual(
      expect.objectContaining({ runId: stillRunning, cancelCi: true }),
    );
  });

  it('with depth but no optimistic merge, waits for the successor and then fails the PR', () => {
    const q = new Scenario({ settings: { concurrency: 3, pendingFailureDepth: 1 } });
    q.submitAll(1, 2, 3);
    q.fail(1);
    expect(q.stateOf(1)).toBe('pending_failure');
    q.pass(2);
    expect(q.stateOf(1)).toBe('failed');
    expect(q.merged).toEqual([]);
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [], tested: [2] });
  });

  it('waits for pendingFailureDepth successors, not more', () => {
    const q = new Scenario({
      settings: { concurrency: 4, pendingFailureDepth: 2, canOptimisticallyMerge: true },
    });
    q.submitAll(1, 2, 3, 4);
    q.fail(1);
    q.fail(2);
    expect(q.states(1, 2)).toEqual({ 1: 'pending_failure', 2: 'pending_failure' });
    q.fail(3);
    expect(q.stateOf(1)).toBe('failed');
    expect(q.merged).toEqual([]);
  });

  it('without depth, fails the PR at once even with optimistic merge on', () => {
    const q = new Scenario({ settings: { concurrency: 2, canOptimisticallyMerge: true } });
    q.submitAll(1, 2);
    q.fail(1);
    expect(q.stateOf(1)).toBe('failed');
  });

  it('lets a flake-aware verdict override the required statuses of a run', () => {
    const q = new Scenario();
    q.submit(1);
    q.send({
      type: 'ci_reported',
      runId: q.runOf(1).id,
      checks: [{ name: 'ci', outcome: 'failed' }],
      verdict: { status: 'succeeded', reason: 'only known flaky tests failed' },
    });
    expect(q.merged).toEqual([1]);
  });
});
