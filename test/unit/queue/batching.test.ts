import { describe, expect, it } from 'vitest';
import { nextWakeAt } from '../../../src/domain/queue/index.ts';
import { Scenario, T0 } from './dsl.ts';

const batching = { batch: true, batchingMinSize: 3, batchingMaxWaitTimeMinutes: 10 };

describe('batching', () => {
  it('tests PRs together once batchingMinSize are pending, and merges each as its own commit', () => {
    const q = new Scenario({ settings: batching });
    q.submitAll(1, 2);
    expect(q.asked('create_test_run')).toEqual([]);
    q.submit(3);
    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-0', ahead: [], tested: [1, 2, 3] });
    q.pass(2);
    expect(q.merged).toEqual([1, 2, 3]);
    expect(q.asked('merge_pr').map((a) => a.prNumber)).toEqual([1, 2, 3]);
  });

  it('starts a smaller batch once the oldest PR waited batchingMaxWaitTimeMinutes', () => {
    const q = new Scenario({ settings: batching });
    q.submit(1);
    q.tick(5);
    q.submit(2);
    expect(nextWakeAt(q.state)).toBe(T0 + 10 * 60_000);
    q.tick(4);
    expect(q.asked('create_test_run')).toEqual([]);
    q.tick(1);
    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-0', ahead: [], tested: [1, 2] });
  });

  it('tests a noBatch PR alone', () => {
    const q = new Scenario({ settings: batching });
    q.submit(1, { noBatch: true });
    expect(q.contents(q.runOf(1)).tested).toEqual([1]);
  });

  it('bisects a failed batch of 8 down to the one bad PR and merges the others', () => {
    const q = new Scenario({
      settings: { batch: true, batchingMinSize: 8, concurrency: 1, bisectionConcurrency: 2 },
    });
    q.bad.add(6);
    q.submitAll(1, 2, 3, 4, 5, 6, 7, 8);
    expect(q.runOf(1).tested).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

    q.settleCi(); // the batch fails
    const round1 = q.activeRuns().map((r) => r.tested);
    expect(round1).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(q.states(1, 8)).toEqual({ 1: 'testing', 8: 'testing' });

    q.settleCi();
    expect(q.activeRuns().map((r) => r.tested)).toEqual([
      [5, 6],
      [7, 8],
    ]);
    q.settleCi();
    expect(q.activeRuns().map((r) => r.tested)).toEqual([[5], [6]]);
    q.settleCi();

    expect(q.stateOf(6)).toBe('failed');
    expect(q.reasonOf(6)).toContain('bisection of batch run');
    expect(q.merged).toEqual([1, 2, 3, 4]);
    // 5, 7 and 8 were cleared but tested without the PRs ahead of them: they wait for a new batch.
    expect(q.states(5, 7, 8)).toEqual({ 5: 'pending', 7: 'pending', 8: 'pending' });
    q.tick(5);
    expect(q.contents(q.runOf(5))).toEqual({ base: 'main-4', ahead: [], tested: [5, 7, 8] });
    q.settleCi();
    expect(q.merged).toEqual([1, 2, 3, 4, 5, 7, 8]);
  });

  it('runs at most bisectionConcurrency bisection runs at once', () => {
    const q = new Scenario({
      settings: { batch: true, batchingMinSize: 8, concurrency: 1, bisectionConcurrency: 1 },
    });
    q.bad.add(8);
    q.submitAll(1, 2, 3, 4, 5, 6, 7, 8);
    q.settleCi();
    expect(q.activeRuns().map((r) => r.tested)).toEqual([[1, 2, 3, 4]]);
    q.settleCi();
    expect(q.activeRuns().map((r) => r.tested)).toEqual([[5, 6, 7, 8]]);
  });

  it('bisection_skip_redundant_tests: a half is known bad when its other half passed', () => {
    const q = new Scenario({
      settings: {
        batch: true,
        batchingMinSize: 4,
        concurrency: 1,
        bisectionConcurrency: 4,
        optimizationMode: 'bisection_skip_redundant_tests',
      },
    });
    q.bad.add(4);
    q.submitAll(1, 2, 3, 4);
    q.settleCi(); // [1,2,3,4] fails
    expect(q.activeRuns().map((r) => r.tested)).toEqual([[1, 2]]);
    q.settleCi(); // [1,2] passes, so [3,4] is bad without a run
    expect(q.activeRuns().map((r) => r.tested)).toEqual([[3]]);
    q.settleCi(); // [3] passes, so [4] is bad without a run
    expect(q.stateOf(4)).toBe('failed');
    expect(q.merged).toEqual([1, 2]);
    const testedSets = q.asked('create_test_run').map((a) => a.testedPrs);
    expect(testedSets).not.toContainEqual([3, 4]);
    expect(testedSets).not.toContainEqual([4]);
  });

  it('never batches past a PR it cannot take, so no PR is tested on top of one queued behind it', () => {
    const q = new Scenario({ settings: { ...batching, batchingMinSize: 2, concurrency: 2 } });
    q.submit(4, { noBatch: true });
    q.submit(2);
    q.submit(1, { priority: 'urgent' }); // goes ahead of 4 and 2: the queue is now 1, 4, 2
    expect(q.state.order).toEqual([1, 4, 2]);
    // Found by the property test: [1, 2] skipped 4, so 1 was tested on top of 4 and merged without it.
    expect(q.asked('create_test_run').map((a) => a.testedPrs)).not.toContainEqual([1, 2]);
    q.tick(10);
    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-0', ahead: [], tested: [1] });
    q.settleCi();
    q.settleCi();
    q.settleCi();
    expect(q.merged).toEqual([1, 4, 2]);
  });
});
