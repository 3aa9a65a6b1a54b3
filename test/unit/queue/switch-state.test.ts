import { describe, expect, it } from 'vitest';
import { getTestingDetails, queueStateName } from '../../../src/domain/queue/index.ts';
import { Scenario } from './dsl.ts';

/** A single-mode queue with PR 1 testing and PR 2 pending, asked to switch to parallel mode. */
function switching(): Scenario {
  const q = new Scenario({ settings: { concurrency: 1 } });
  q.submitAll(1, 2);
  q.update({ mode: 'parallel' });
  expect(queueStateName(q.state)).toBe('switching_modes');
  return q;
}

describe('updateQueue state while a mode switch waits for PRs in flight', () => {
  it('draining is the state at once; the switch still completes and the queue stays draining', () => {
    const q = switching();
    q.update({ state: 'draining' });
    expect(queueStateName(q.state)).toBe('draining');
    expect(q.state.pendingMode).toBe('parallel');
    q.submit(3, { targets: ['a'] });

    q.pass(1);
    expect(q.merged).toEqual([1]);
    expect(q.state.settings.mode).toBe('parallel');
    expect(q.state.pendingMode).toBeNull();
    expect(queueStateName(q.state)).toBe('draining');
    // Draining admits nothing new: PR 3 waits although it has targets.
    expect(q.stateOf(3)).toBe('not_ready');
  });

  it('paused is the state at once and keeps the switch; draining later lets it complete', () => {
    const q = switching();
    q.update({ state: 'paused' });
    expect(queueStateName(q.state)).toBe('paused');
    q.pass(1);
    expect(q.merged).toEqual([]);
    expect(q.state.pendingMode).toBe('parallel');
    q.update({ state: 'draining' });
    expect(q.merged).toEqual([1]);
    expect(q.state.settings.mode).toBe('parallel');
    expect(queueStateName(q.state)).toBe('draining');
  });

  it('running is the state at once: it ends the switch and the queue goes on in its mode', () => {
    const q = switching();
    q.update({ state: 'running' });
    expect(queueStateName(q.state)).toBe('running');
    expect(q.state.pendingMode).toBeNull();
    expect(q.state.settings.mode).toBe('single');
    q.pass(1);
    expect(q.merged).toEqual([1]);
    expect(q.state.settings.mode).toBe('single');
    expect(q.stateOf(2)).toBe('testing');
  });

  it('a mode in the same request applies after the state: running + mode is a switch', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submitAll(1, 2);
    q.update({ state: 'running', mode: 'parallel' });
    expect(queueStateName(q.state)).toBe('switching_modes');
    q.update({ state: 'draining', mode: 'parallel' });
    expect(queueStateName(q.state)).toBe('draining');
    expect(q.state.pendingMode).toBe('parallel');
  });
});

describe('check states in the testing details', () => {
  it('keeps a status reported as error apart from a failure (both fail the run)', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submit(1);
    const run = q.runOf(1);
    q.send({
      type: 'ci_reported',
      runId: run.id,
      checks: [
        { name: 'ci', outcome: 'failed', errored: true },
        { name: 'lint', outcome: 'failed' },
      ],
    });
    expect(q.stateOf(1)).not.toBe('testing');
    const checks = getTestingDetails(q.state, run.id)?.checks;
    expect(checks).toEqual([
      { name: 'ci', outcome: 'failed', url: null, errored: true },
      { name: 'lint', outcome: 'failed', url: null },
    ]);
  });
});
