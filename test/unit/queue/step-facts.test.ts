// queueStepFacts: what one engine step did, as the queue metrics count it. Driven through the engine
// (the scenario DSL), comparing the state before and after each action of a user or CI.
import { describe, expect, it } from 'vitest';
import { queueStepFacts } from '../../../src/domain/queue-step-facts.ts';
import { Scenario, T0 } from './dsl.ts';

const MIN = 60_000;

/** The facts of whatever `act` made the engine do. */
function factsOf(q: Scenario, act: () => unknown) {
  const before = q.state;
  act();
  return queueStepFacts(before, q.state, q.now);
}

describe('queueStepFacts', () => {
  it('counts a submission, its wait for a slot, its test and its merge with their durations', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    expect(factsOf(q, () => q.submit(1))).toEqual({
      submitted: 1,
      firstTestingWaitMs: [0],
      left: [],
      runsEnded: [],
    });
    q.now = T0 + 2 * MIN;
    // PR 2 waits: the one slot is PR 1's.
    expect(factsOf(q, () => q.submit(2))).toMatchObject({ submitted: 1, firstTestingWaitMs: [] });
    q.now = T0 + 10 * MIN;
    const passed = factsOf(q, () => q.pass(1));
    expect(passed.left).toEqual([{ state: 'merged', sinceSubmittedMs: 10 * MIN, testingMs: 10 * MIN }]);
    expect(passed.runsEnded).toEqual([{ kind: 'main', status: 'succeeded', durationMs: 10 * MIN }]);
    expect(passed.firstTestingWaitMs).toEqual([8 * MIN]);
    expect(passed.submitted).toBe(0);
  });

  it('measures testing from the last move to testing, and counts a PR tested again only once as waiting', () => {
    const q = new Scenario({ settings: { concurrency: 2 } });
    q.submitAll(1, 2);
    q.now = T0 + 5 * MIN;
    // PR 1 fails: PR 2, tested on top of it, is tested again on the target alone.
    const failed = factsOf(q, () => q.fail(1));
    expect(failed.left).toEqual([{ state: 'failed', sinceSubmittedMs: 5 * MIN, testingMs: 5 * MIN }]);
    expect(failed.firstTestingWaitMs).toEqual([]);
    q.now = T0 + 12 * MIN;
    const merged = factsOf(q, () => q.pass(2));
    expect(merged.left).toEqual([{ state: 'merged', sinceSubmittedMs: 12 * MIN, testingMs: 7 * MIN }]);
  });

  it('counts a cancelled PR without a test time, and a PR submitted again as a new submission', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submit(1);
    q.submit(2, { headCheck: 'pending' });
    q.now = T0 + MIN;
    const cancelled = factsOf(q, () => q.cancel(2));
    expect(cancelled.left).toEqual([{ state: 'cancelled', sinceSubmittedMs: MIN, testingMs: null }]);
    expect(factsOf(q, () => q.submit(2, { headCheck: 'pending' })).submitted).toBe(1);
    // The same state twice: nothing happened.
    expect(queueStepFacts(q.state, q.state, q.now)).toEqual({
      submitted: 0,
      firstTestingWaitMs: [],
      left: [],
      runsEnded: [],
    });
  });
});
