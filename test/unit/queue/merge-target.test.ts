/**
 * A merge is asked for together with the target tip it was proven on (expectedTargetSha). When the
 * forge refuses because the target moved in between (a push from outside), the PR did nothing wrong:
 * it is tested again on the new tip, never failed, and never merged onto a history it was not tested on.
 */
import { describe, expect, it } from 'vitest';
import { outstandingActions } from '../../../src/domain/queue/index.ts';
import { Scenario } from './dsl.ts';

describe('merge_pr carries the tested target tip', () => {
  it('asks to merge onto the tip the passing run leads to, our earlier merges included', () => {
    const q = new Scenario();
    q.submitAll(1, 2);
    q.pass(1);
    q.pass(2);
    expect(q.asked('merge_pr').map((a) => [a.prNumber, a.expectedTargetSha])).toEqual([
      [1, 'main-0'],
      [2, 'main-1'],
    ]);
  });

  it('a merge refused because the target moved is an outside push: the PR is retested on the new tip, not failed', () => {
    const q = new Scenario({ autoMerge: false });
    q.submitAll(1, 2);
    q.pass(1);
    const [merge] = q.waitingMerges;
    expect(merge).toMatchObject({ prNumber: 1, expectedTargetSha: 'main-0' });
    const firstRun = q.runOf(1).id;

    q.targetMovedDuringMerge(1, 'outside-1');
    expect(q.state.merging).toBeNull();
    expect(q.state.targetHead).toBe('outside-1');
    expect(q.states(1, 2)).toEqual({ 1: 'testing', 2: 'testing' });
    expect(q.reasonOf(1)).not.toMatch(/merge failed/);
    const retest = q.runOf(1);
    expect(retest.id).not.toBe(firstRun);
    expect(q.contents(retest)).toEqual({ base: 'outside-1', ahead: [], tested: [1] });
    expect(q.contents(q.runOf(2))).toEqual({ base: 'outside-1', ahead: [1], tested: [2] });
    expect(q.merged).toEqual([]);

    q.pass(1);
    expect(q.waitingMerges).toEqual([
      expect.objectContaining({ prNumber: 1, expectedTargetSha: 'outside-1' }),
    ]);
    q.completeMerge(1);
    expect(q.stateOf(1)).toBe('merged');
  });

  it('a direct merge refused because the target moved goes through the queue instead', () => {
    const q = new Scenario({ autoMerge: false, settings: { directMergeMode: 'always' } });
    q.submit(1, { baseSha: 'main-0' });
    expect(q.waitingMerges).toEqual([
      expect.objectContaining({ prNumber: 1, direct: true, expectedTargetSha: 'main-0' }),
    ]);
    q.targetMovedDuringMerge(1, 'outside-1');
    expect(q.stateOf(1)).toBe('testing');
    expect(q.contents(q.runOf(1))).toEqual({ base: 'outside-1', ahead: [], tested: [1] });
    expect(q.waitingMerges).toEqual([]);
  });

  it('any other refusal still fails the PR', () => {
    const q = new Scenario({ autoMerge: false });
    q.submit(1);
    q.pass(1);
    q.failMerge(1, 'conflict');
    expect(q.stateOf(1)).toBe('failed');
    expect(q.state.targetHead).toBe('main-0');
  });

  it('re-emits the in-flight merge with the tip it was decided on', () => {
    const q = new Scenario({ autoMerge: false });
    q.submit(1);
    q.pass(1);
    // A push seen while the merge is in flight waits for the merge's answer: the tip asked for stays.
    q.pushToTarget('outside-1');
    expect(outstandingActions(q.state)).toContainEqual(
      expect.objectContaining({ type: 'merge_pr', prNumber: 1, expectedTargetSha: 'main-0' }),
    );
  });
});
