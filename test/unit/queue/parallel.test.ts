import { describe, expect, it } from 'vitest';
import { getTestingDetails } from '../../../src/domain/queue/index.ts';
import { Scenario } from './dsl.ts';

const parallel = { mode: 'parallel' as const, concurrency: 5 };

describe('parallel mode', () => {
  it('waits for impacted targets of the current head before queueing a PR', () => {
    const q = new Scenario({ settings: parallel });
    q.submit(1);
    expect(q.stateOf(1)).toBe('not_ready');
    q.send({ type: 'impacted_targets_set', prNumber: 1, headSha: 'stale-sha', targets: ['a'] });
    expect(q.stateOf(1)).toBe('not_ready');
    q.send({ type: 'impacted_targets_set', prNumber: 1, headSha: q.head(1), targets: ['a'] });
    expect(q.stateOf(1)).toBe('testing');
  });

  it('tests PRs with disjoint targets in independent lanes and overlapping ones on top (dependentPrs)', () => {
    const q = new Scenario({ settings: parallel });
    q.submit(1, { targets: ['frontend'] });
    q.submit(2, { targets: ['backend'] });
    q.submit(3, { targets: ['frontend', 'backend'] });
    q.submit(4, { targets: ['docs'] });

    expect(q.contents(q.runOf(1)).ahead).toEqual([]);
    expect(q.contents(q.runOf(2)).ahead).toEqual([]);
    expect(q.contents(q.runOf(3)).ahead).toEqual([1, 2]);
    expect(q.contents(q.runOf(4)).ahead).toEqual([]);
    expect(getTestingDetails(q.state, q.runOf(3).id)).toMatchObject({
      dependentPrs: [1, 2],
      impactedTargets: ['backend', 'frontend'],
      impactedTargetsForTestedPrs: ['backend', 'frontend'],
    });

    q.pass(4);
    q.pass(2);
    expect(q.merged).toEqual([4, 2]);
    q.pass(3);
    expect(q.merged).toEqual([4, 2]);
    q.pass(1);
    expect(q.merged).toEqual([4, 2, 1, 3]);
  });

  it('a failure only restarts the PRs that depend on the failed one', () => {
    const q = new Scenario({ settings: parallel });
    q.submit(1, { targets: ['a'] });
    q.submit(2, { targets: ['b'] });
    q.submit(3, { targets: ['a'] });
    const run2 = q.runOf(2).id;
    q.fail(1);
    expect(q.stateOf(1)).toBe('failed');
    expect(q.runOf(2).id).toBe(run2);
    expect(q.contents(q.runOf(3)).ahead).toEqual([]);
  });

  it('"ALL" depends on everything ahead and everything after depends on it', () => {
    const q = new Scenario({ settings: parallel });
    q.submit(1, { targets: ['a'] });
    q.submit(2, { targets: 'ALL' });
    q.submit(3, { targets: ['z'] });
    expect(q.contents(q.runOf(2)).ahead).toEqual([1]);
    expect(q.contents(q.runOf(3)).ahead).toEqual([1, 2]);
  });

  it('an empty target list depends on nothing', () => {
    const q = new Scenario({ settings: parallel });
    q.submit(1, { targets: ['a'] });
    q.submit(2, { targets: [] });
    expect(q.contents(q.runOf(2)).ahead).toEqual([]);
  });

  it('direct merge only needs its own lane to be empty', () => {
    const q = new Scenario({ settings: { ...parallel, directMergeMode: 'always' } });
    q.submit(1, { targets: ['a'] });
    q.submit(2, { targets: ['b'], baseSha: 'main-0' });
    expect(q.merged).toEqual([2]);
    expect(q.stateOf(1)).toBe('testing');
  });
});
