import { describe, expect, it } from 'vitest';
import { nextWakeAt, queueStateFromJson, type TestRun } from '../../../src/domain/queue/index.ts';
import { Scenario, T0 } from './dsl.ts';

const batching = { batch: true, batchingMinSize: 3, batchingMaxWaitTimeMinutes: 10 };

/** Main runs first, then segments, each by their first tested PR. */
const sorted = (runs: TestRun[]) =>
  [...runs].sort(
    (a, b) => a.kind.localeCompare(b.kind, 'en') * -1 || (a.tested[0] ?? 0) - (b.tested[0] ?? 0),
  );

/**
 * Batches of 2, two at a time, two bisection runs, bisection_skip_redundant_tests: PRs 1–8 submitted,
 * 4 bad (the cleared-PR tests start from it).
 */
function eightWithFourBad(extra: { batchingMaxSize?: number } = {}): Scenario {
  const q = new Scenario({
    settings: {
      batch: true,
      batchingMinSize: 2,
      ...extra,
      concurrency: 2,
      bisectionConcurrency: 2,
      optimizationMode: 'bisection_skip_redundant_tests',
    },
  });
  q.bad.add(4);
  q.submitAll(1, 2, 3, 4, 5, 6, 7, 8);
  return q;
}

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

  it('bisects a failed batch of 8 on the side: segments run on the target branch, passing ones go back to the line', () => {
    const q = new Scenario({
      settings: { batch: true, batchingMinSize: 8, concurrency: 1, bisectionConcurrency: 2 },
    });
    q.bad.add(6);
    q.submitAll(1, 2, 3, 4, 5, 6, 7, 8);
    expect(q.runOf(1).tested).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

    q.settleCi(); // the batch fails: its left half is tested on the target branch, off the line
    expect(q.activeRuns().map((r) => [r.kind, q.contents(r)])).toEqual([
      ['bisection', { base: 'main-0', ahead: [], tested: [1, 2, 3, 4] }],
    ]);
    expect(q.states(1, 8)).toEqual({ 1: 'testing', 8: 'testing' });

    q.settleCi(); // [1-4] passed: it merges nothing, its PRs are cleared and tested again in a main run;
    // the right half is tested on top of them (optimizationMode off), still off the line
    expect(q.merged).toEqual([]);
    expect(q.state.prs.get(1)?.history.at(-2)?.reason).toContain('cleared by bisection run');
    expect(q.activeRuns().map((r) => [r.kind, q.contents(r)])).toEqual([
      ['main', { base: 'main-0', ahead: [], tested: [1, 2, 3, 4] }],
      ['bisection', { base: 'main-0', ahead: [1, 2, 3, 4], tested: [5, 6, 7, 8] }],
    ]);
    q.settleCi(); // [1-4] merged through its main run; [5-8] failed and is halved, on the new head
    expect(q.merged).toEqual([1, 2, 3, 4]);
    expect(q.activeRuns().map((r) => [r.kind, q.contents(r)])).toEqual([
      ['bisection', { base: 'main-4', ahead: [], tested: [5, 6] }],
    ]);
    q.settleCi(); // [5,6] failed: [7,8] is tested alone, and [5]
    q.settleCi(); // [7,8] and [5] passed: cleared; [6] is tested on top of 5
    expect(q.activeRuns().map((r) => [r.kind, q.contents(r)])).toEqual([
      ['main', { base: 'main-4', ahead: [], tested: [7, 8] }],
      ['bisection', { base: 'main-4', ahead: [5], tested: [6] }],
    ]);
    q.settleCi(); // [6] failed: ejected; [5] is tested behind [7,8], which merged
    expect(q.stateOf(6)).toBe('failed');
    expect(q.reasonOf(6)).toContain('bisection of batch run');
    expect(q.activeRuns().map((r) => [r.kind, q.contents(r)])).toEqual([
      ['main', { base: 'main-4', ahead: [7, 8], tested: [5] }],
    ]);
    q.settleCi();
    expect(q.merged).toEqual([1, 2, 3, 4, 7, 8, 5]);
    expect(q.activeRuns()).toEqual([]);
    expect(q.state.bisections).toEqual([]);
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
    // The left segment is tested on the target branch, off the line: nothing is built on it.
    expect(q.runOf(1).kind).toBe('bisection');
    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-0', ahead: [], tested: [1] });
    const segment = q.runOf(1);
    q.settleCi(); // [3,4] merges; [1] passes and is tested in the line; [2] is tested on top of 1
    expect(q.merged).toEqual([3, 4]);
    expect(q.runOf(1).kind).toBe('main');
    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-2', ahead: [], tested: [1] });
    expect(q.runOf(2).kind).toBe('bisection');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-2', ahead: [1], tested: [2] });
    // A segment run proves nothing: 1 merges only on the main run that tested it on main-2.
    expect(q.state.runs[segment.id]?.status).toBe('succeeded');
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
    q.settleCi(); // 3 and 4 merge; the segment [1] fails: ejected, [2] is tested on its own
    q.settleCi(); // [2] passes: cleared, tested in the line
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
    const segments = () => q.activeRuns().filter((r) => r.kind === 'bisection');
    q.settleCi();
    expect(segments().map((r) => r.tested)).toEqual([[1, 2, 3, 4]]);
    q.settleCi();
    expect(segments().map((r) => r.tested)).toEqual([[5, 6, 7, 8]]);
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
    q.settleCi(); // [1,2] passes, so [3,4] is bad without a run and halved; [1,2] goes back to the line
    expect(q.activeRuns().map((r) => [r.kind, r.tested])).toEqual([
      ['main', [1, 2]],
      ['bisection', [3]],
    ]);
    expect(q.merged).toEqual([]); // a segment proves nothing: 1 and 2 merge on their main run
    q.settleCi(); // [3] passes, so [4] is bad without a run
    expect(q.stateOf(4)).toBe('failed');
    expect(q.reasonOf(4)).toContain('inferred from the other half passing');
    expect(q.merged).toEqual([1, 2]);
    q.settleCi();
    expect(q.merged).toEqual([1, 2, 3]);
    const testedSets = q.asked('create_test_run').map((a) => a.testedPrs);
    expect(testedSets).not.toContainEqual([3, 4]);
    expect(testedSets).not.toContainEqual([4]);
  });

  it('cleared PRs go back behind every run under test, and join the next batch on top of its fresh PRs', () => {
    const q = eightWithFourBad();
    q.fail(1); // [1,2] fails (a flake, as it turns out): it leaves the line, [3,4] and [5,6] run
    expect(sorted(q.activeRuns()).map((r) => [r.kind, q.contents(r)])).toEqual([
      ['main', { base: 'main-0', ahead: [], tested: [3, 4] }],
      ['main', { base: 'main-0', ahead: [3, 4], tested: [5, 6] }],
      ['bisection', { base: 'main-0', ahead: [], tested: [1] }],
    ]);
    const inFlight = sorted(q.activeRuns()).filter((r) => r.kind === 'main');
    q.pass(1); // the segment [1] passes: cleared; [2] is inferred bad and ejected
    expect(q.stateOf(2)).toBe('failed');
    expect(q.stateOf(1)).toBe('pending');
    // No run under test changed: 1 waits behind them, ahead of the fresh PRs 7 and 8.
    expect(sorted(q.activeRuns()).map((r) => r.id)).toEqual(inFlight.map((r) => r.id));
    expect(q.state.order).toEqual([3, 4, 5, 6, 1, 7, 8]);
    q.fail(3); // [3,4] fails: [5,6] restarts without it, the next batch takes 1 on top of 7 and 8
    expect(sorted(q.activeRuns()).map((r) => [r.kind, q.contents(r)])).toEqual([
      ['main', { base: 'main-0', ahead: [5, 6], tested: [1, 7, 8] }],
      ['main', { base: 'main-0', ahead: [], tested: [5, 6] }],
      ['bisection', { base: 'main-0', ahead: [], tested: [3] }],
    ]);
    for (let i = 0; i < 4; i += 1) q.settleCi();
    expect(q.merged).toEqual([5, 6, 1, 7, 8, 3]);
    expect(q.stateOf(4)).toBe('failed');
  });

  it('cleared PRs ride on top of the target size, but never past a batchingMaxSize the user set', () => {
    const q = eightWithFourBad({ batchingMaxSize: 2 });
    q.fail(1); // as above: [1,2] leaves the line, its segment [1] passes and 1 is cleared
    q.pass(1);
    expect(q.state.order).toEqual([3, 4, 5, 6, 1, 7, 8]);
    q.fail(3); // the next batch takes 1 and one fresh PR, not 1 on top of 7 and 8
    const main = sorted(q.activeRuns()).filter((r) => r.kind === 'main');
    expect(main.map((r) => r.tested)).toEqual([
      [1, 7],
      [5, 6],
    ]);
    const sizes = new Set<number>();
    for (let i = 0; i < 6; i += 1) {
      for (const r of q.activeRuns()) if (r.kind === 'main') sizes.add(r.tested.length);
      q.settleCi();
    }
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2);
    expect(q.merged).toEqual(expect.arrayContaining([1, 3, 5, 6, 7, 8]));
  });

  it('a segment saved by the previous engine (tested in the line) stops its bisection: nothing is cleared or inferred from it', () => {
    const q = eightWithFourBad();
    q.fail(1); // [1,2] leaves the line; its segment [1] runs
    const segment = q.runOf(1);
    expect(segment.kind).toBe('bisection');
    // As the previous engine stored it: the segment built on the batches under test ahead of it.
    const saved = JSON.parse(JSON.stringify(q.state)) as { runs: Record<string, { dependsOn: number[] }> };
    (saved.runs[segment.id] as { dependsOn: number[] }).dependsOn = [3, 4, 5, 6];
    q.state = queueStateFromJson(JSON.stringify(saved));
    q.pass(1);
    // Its pass proves nothing on the target branch: the bisection stops and both PRs are retested in the
    // line, in a main run (with the segment trusted, 1 would be cleared and 2 inferred bad and ejected).
    expect(q.state.bisections).toEqual([]);
    expect(q.runOf(1).kind).toBe('main');
    expect(q.runOf(2).id).toBe(q.runOf(1).id);
    expect(q.state.prs.get(1)?.cleared).not.toBe(true);
    for (let i = 0; i < 8; i += 1) q.settleCi();
    expect(q.merged).toEqual(expect.arrayContaining([1, 2, 3, 5, 6, 7, 8]));
    expect(q.merged).not.toContain(4);
  });

  it('a failing segment is conclusive: it ejects its PR without restarting the runs under test', () => {
    const q = new Scenario({
      settings: { batch: true, batchingMinSize: 2, concurrency: 2, bisectionConcurrency: 2 },
    });
    q.bad.add(1);
    q.submitAll(1, 2, 3, 4, 5, 6);
    q.fail(1);
    const inFlight = sorted(q.activeRuns()).filter((r) => r.kind === 'main');
    expect(inFlight.map((r) => r.tested)).toEqual([
      [3, 4],
      [5, 6],
    ]);
    q.fail(1); // the segment [1] fails on the target branch: 1 is ejected at once
    expect(q.stateOf(1)).toBe('failed');
    expect(q.reasonOf(1)).toContain('it failed alone on main');
    expect(
      sorted(q.activeRuns())
        .filter((r) => r.kind === 'main')
        .map((r) => r.id),
    ).toEqual(inFlight.map((r) => r.id));
    for (let i = 0; i < 3; i += 1) q.settleCi();
    expect(q.merged).toEqual([3, 4, 5, 6, 2]);
  });

  it('optimizationMode off: the right half is tested on top of the cleared left half, so a failure of the two together is found', () => {
    const q = new Scenario({
      settings: { batch: true, batchingMinSize: 2, concurrency: 1, bisectionConcurrency: 2 },
    });
    q.submitAll(1, 2);
    q.fail(1); // 1 and 2 break the build together only
    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-0', ahead: [], tested: [1] });
    expect(q.runOf(2).id).not.toBe(q.runOf(1).id); // 2 waits aside for the left half
    q.pass(1); // [1] passes alone: cleared, back in the line; [2] is tested on top of it
    expect(q.runOf(1).kind).toBe('main');
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [1], tested: [2] });
    q.fail(2); // [2] on top of 1 fails: ejected, where two halves passing alone would clear both for ever
    expect(q.stateOf(2)).toBe('failed');
    expect(q.reasonOf(2)).toContain('on top of #1');
    q.pass(1);
    expect(q.merged).toEqual([1]);
    expect(q.state.bisections).toEqual([]);
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
