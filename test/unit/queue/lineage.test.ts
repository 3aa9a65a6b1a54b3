/**
 * The queue's record of its own merges (the lineage) is read and saved with every event, so it must not
 * grow with every merge forever; what it forgets must never be a commit a run in flight is based on.
 */
import { describe, expect, it } from 'vitest';
import { LINEAGE_KEPT } from '../../../src/domain/queue/handlers-target.ts';
import { Scenario } from './dsl.ts';

describe('the lineage of our merges', () => {
  it('keeps at most LINEAGE_KEPT merges when nothing in flight needs older ones', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    const n = LINEAGE_KEPT + 50;
    for (let pr = 1; pr <= n; pr += 1) {
      q.submit(pr);
      q.pass(pr);
    }
    expect(q.merged).toHaveLength(n);
    expect(q.state.lineage.length).toBeLessThanOrEqual(LINEAGE_KEPT);
    expect(q.state.lineage.at(-1)?.sha).toBe(q.state.targetHead);
    // The queue goes on as before: the next PR is tested on the tip and merges.
    q.submit(n + 1);
    expect(q.contents(q.runOf(n + 1))).toMatchObject({ base: q.state.targetHead, ahead: [] });
    q.pass(n + 1);
    expect(q.merged.at(-1)).toBe(n + 1);
  });

  it('keeps the commit a run in flight is based on, however many merges ago: the run stays valid and merges untested again', () => {
    const last = LINEAGE_KEPT + 5;
    const q = new Scenario({ settings: { concurrency: last } });
    for (let pr = 1; pr <= last; pr += 1) q.submit(pr);
    const run = q.runOf(last);
    expect(q.contents(run)).toMatchObject({ base: 'main-0' });
    for (let pr = 1; pr < last; pr += 1) q.pass(pr);
    expect(q.merged).toHaveLength(last - 1);
    expect(q.state.lineage[0]?.sha).toBe('main-0');
    expect(q.runOf(last).id).toBe(run.id);
    q.pass(last);
    expect(q.merged.at(-1)).toBe(last);
    expect(q.asked('merge_pr').at(-1)).toMatchObject({
      prNumber: last,
      expectedTargetSha: `main-${last - 1}`,
    });
  }, 180_000);
});
