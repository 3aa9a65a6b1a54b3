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

  it('bisects a failed batch of 8 on the side, merging each segment as soon as it passes', () => {
    const q = new Scenario({
      settings: { batch: true, batchingMinSize: 8, concurrency: 1, bisectionConcurrency: 2 },
    });
    q.bad.add(6);
    q.submitAll(1, 2, 3, 4, 5, 6, 7, 8);
    expect(q.runOf(1).tested).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

    q.settleCi(); // the batch fails: both halves are tested, the right one on top of the left
    expect(q.activeRuns().map((r) => [r.dependsOn, r.tested])).toEqual([
      [[], [1, 2, 3, 4]],
      [
        [1, 2, 3, 4],
        [5, 6, 7, 8],
      ],
    ]);
    expect(q.states(1, 8)).toEqual({ 1: 'testing', 8: 'testing' });

    q.settleCi(); // [1-4] passed and merged at once; [5-8] failed and is halved
    expect(q.merged).toEqual([1, 2, 3, 4]);
    expect(q.activeRuns().map((r) => r.tested)).toEqual([
      [5, 6],
      [7, 8],
    ]);
    q.settleCi(); // [5,6] failed; [7,8], built on it, is rebuilt without it, [5] behind it
    expect(q.activeRuns().map((r) => [r.dependsOn, r.tested])).toEqual([
      [[], [7, 8]],
      [[7, 8], [5]],
    ]);
    q.settleCi();
    q.settleCi();

    expect(q.stateOf(6)).toBe('failed');
    expect(q.reasonOf(6)).toContain('bisection of batch run');
    // 5 was out of the line while 7 and 8 were proven: they merged ahead of it, each as tested.
    expect(q.merged).toEqual([1, 2, 3, 4, 7, 8, 5]);
    expect(q.activeRuns()).toEqual([]);
  });

  it('a failed batch leaves the line at once: the batch behind is rebuilt without it', () => {
    const q = new Scenario({
      settings: { batch: true, batchingMinSize: 2, concurrency: 2, bisectionConcurrency: 2 },
    });
    q.bad.add(2);
    q.submitAll(1, 2, 3, 4);
    const behind = q.runOf(3);
    expect(q.contents(behind)).toEqual({ base: 'main-0', ahead: [1, 2], tested: [3, 4] });
    q.fail(1); // [1,2] fails before [3,4] reports
    expect(q.states(1, 2)).toEqual({ 1: 'testing', 2: 'testing' });
    const rebuilt = q.runOf(3);
    expect(rebuilt.id).not.toBe(behind.id);
    expect(q.contents(rebuilt)).toEqual({ base: 'main-0', ahead: [], tested: [3, 4] });
    // The segments are tested on top of the line, where they would merge.
    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-0', ahead: [3, 4], tested: [1] });
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [3, 4, 1], tested: [2] });
    q.settleCi();
    q.settleCi();
    expect(q.merged).toEqual([3, 4, 1]);
    expect(q.stateOf(2)).toBe('failed');
  });

  it('parallel mode: a failed batch only restarts the runs that held it', () => {
    const q = new Scenario({
      settings: {
        mode: 'parallel',
        batch: true,
        batchingMinSize: 2,
        concurrency: 2,
        bisectionConcurrency: 2,
      },
    });
    q.submit(1, { targets: ['a'] });
    q.submit(2, { targets: ['a'] });
    q.submit(3, { targets: ['b'] });
    q.submit(4, { targets: ['b'] });
    const other = q.runOf(3);
    expect(q.contents(other).ahead).toEqual([]);
    q.bad.add(1);
    q.fail(1);
    expect(q.runOf(3).id).toBe(other.id);
    expect(q.states(1, 2, 3)).toEqual({ 1: 'testing', 2: 'testing', 3: 'testing' });
    q.settleCi();
    q.settleCi();
    expect(q.merged).toEqual([3, 4, 2]);
    expect(q.stateOf(1)).toBe('failed');
  });

  it('optimistic merge applies to batches: a passing batch behind clears a failed one it holds', () => {
    const q = new Scenario({
      settings: {
        batch: true,
        batchingMinSize: 2,
        concurrency: 2,
        canOptimisticallyMerge: true,
        pendingFailureDepth: 1,
      },
    });
    q.submitAll(1, 2, 3, 4);
    q.fail(1); // a flake: the batch waits for the one behind (pending-failure depth 1)
    expect(q.states(1, 2)).toEqual({ 1: 'pending_failure', 2: 'pending_failure' });
    q.pass(3);
    expect(q.merged).toEqual([1, 2, 3, 4]);
  });

  it('grows batches with the queue up to batchingMaxSize; batchingMinSize still starts a short one', () => {
    const q = new Scenario({
      settings: { batch: true, batchingMinSize: 2, batchingMaxSize: 4, concurrency: 1 },
    });
    q.submitAll(1, 2); // a short queue: a batch of batchingMinSize
    expect(q.runOf(1).tested).toEqual([1, 2]);
    q.submitAll(3, 4, 5, 6, 7, 8, 9);
    q.settleCi();
    expect(q.runOf(3).tested).toEqual([3, 4, 5, 6]); // 7 pending for one slot: capped at 4
    q.settleCi();
    expect(q.runOf(7).tested).toEqual([7, 8, 9]);
    q.settleCi();
    expect(q.merged).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
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
    expect(q.merged).toEqual([1, 2]); // proven, merged without waiting for the rest
    q.settleCi(); // [3] passes, so [4] is bad without a run
    expect(q.stateOf(4)).toBe('failed');
    expect(q.merged).toEqual([1, 2, 3]);
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
