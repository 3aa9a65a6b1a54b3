// Issue 26: batching policies of the idealised queue (bench/queue-ideal.ts) that the engine could adopt. The
// idealised queue checks every merge (a PR merges only on a passing run whose branch was exactly the history
// it lands on plus it); these tests pin that the check holds for the new options and catches a violation,
// that the default policies are unchanged, and the 3× figure of side segments at f = 0. Simulated time and
// seeded PRNGs only: no timing, no Trunk client.
import { describe, expect, it } from 'vitest';
import {
  estimateIdeal,
  type IdealModel,
  type IdealPolicy,
  IdealQueue,
  SETTLE_HOURS,
  simulateIdeal,
} from '../../bench/queue-ideal.ts';

const model = (flakeRate: number, jitter = 0): IdealModel => ({
  durationMinutes: 30,
  jitter,
  failureRate: 0.05,
  flakeRate,
});

const best: IdealPolicy = {
  concurrency: 5,
  batchSize: 4,
  bisectionConcurrency: 10,
  sideSegments: 'head',
  clearedRideFree: true,
};

describe('idealised queue: batching policies for issue 26', () => {
  it('leaves the default policies as they were (seed 99, 200 h after 48 h, T ± 10%)', () => {
    const run = (policy: IdealPolicy, f: number) => {
      const r = simulateIdeal(policy, model(f, 0.1), { seed: 99, hours: 200, warmupHours: 48 });
      return [r.merged, r.ejectedBad, r.ejectedGood, r.runs];
    };
    // Figures of the idealised queue before the options were added.
    expect(run({ concurrency: 5 }, 0)).toEqual([1721, 91, 0, 2235]);
    expect(run({ concurrency: 5, batchSize: 4 }, 0)).toEqual([3638, 200, 0, 7274]);
    expect(run({ concurrency: 5, batchSize: 4 }, 0.15)).toEqual([2266, 129, 102, 7423]);
    expect(run({ concurrency: 5, optimistic: true, pendingFailureDepth: 1 }, 0.05)).toEqual([
      1680, 92, 4, 2316,
    ]);
  });

  it('side segments on the target branch, cleared PRs riding free: ≥ 3× concurrency 5 at f = 0', () => {
    const o = { seed: 7001, seeds: 20, hours: 400, warmupHours: SETTLE_HOURS };
    const single = estimateIdeal({ concurrency: 5 }, model(0), o).mergedPerHour;
    const batched = estimateIdeal(best, model(0), o);
    expect(batched.mergedPerHour / single).toBeGreaterThanOrEqual(3);
  }, 120_000);

  it('every merge of the new options passes the safety check, with flakes and jitter', () => {
    for (const sideSegments of ['head', 'tip'] as const) {
      for (const policy of [
        { ...best, sideSegments },
        { ...best, sideSegments, clearedRideFree: false },
        { ...best, sideSegments, maxBatchSize: 8 },
        { concurrency: 5, batchSize: 4, maxBatchSize: 8 },
      ]) {
        const r = simulateIdeal(policy, model(0.15, 0.1), { seed: 5, hours: 100, warmupHours: 24 });
        expect(r.merged).toBeGreaterThan(0);
        expect(r.ejectedBad).toBeGreaterThan(0);
      }
    }
  });

  it('the safety check catches a run built without the PRs ahead of it', () => {
    const q = new IdealQueue({ concurrency: 5 }, model(0), { seed: 1, hours: 10 });
    const raw = q as unknown as {
      createRun: (kind: string, tested: unknown[], deps: unknown[], node: unknown) => unknown;
    };
    const create = raw.createRun.bind(q);
    raw.createRun = (kind, tested, _deps, node) => create(kind, tested, [], node);
    expect(() => q.run()).toThrow(/merges onto a history its run did not test/);
  });
});
