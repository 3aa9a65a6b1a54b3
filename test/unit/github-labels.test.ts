import { describe, expect, it } from 'vitest';
import { enqueueingLabelProblem, labelCommand, stateLabelChanges } from '../../src/domain/github-labels.ts';

describe('GitHub label rules (docs/github.md, Labels)', () => {
  const on = { enqueueingLabel: 'Ready-To-Merge', labelCommandsEnabled: false };

  it('the enqueueing label (any case) submits when applied; its removal cancels only with label commands', () => {
    expect(labelCommand(on, 'labeled', 'ready-to-merge')).toBe('submit');
    expect(labelCommand(on, 'unlabeled', 'ready-to-merge')).toBeNull();
    expect(labelCommand({ ...on, labelCommandsEnabled: true }, 'unlabeled', 'READY-TO-MERGE')).toBe('cancel');
    expect(labelCommand(on, 'labeled', 'bug')).toBeNull();
    expect(labelCommand({ enqueueingLabel: '', labelCommandsEnabled: true }, 'labeled', '')).toBeNull();
  });

  it('a PR keeps exactly the state label of its state and no other; foreign labels are left alone', () => {
    expect(stateLabelChanges(['bug'], 'pending')).toEqual({ add: ['mainline:queued'], remove: [] });
    expect(stateLabelChanges(['bug', 'mainline:queued'], 'testing')).toEqual({
      add: ['mainline:testing'],
      remove: ['mainline:queued'],
    });
    expect(stateLabelChanges(['Mainline:Testing'], 'tests_passed')).toEqual({ add: [], remove: [] });
    expect(stateLabelChanges(['mainline:testing', 'mainline:other'], 'cancelled')).toEqual({
      add: [],
      remove: ['mainline:testing'],
    });
  });

  it('an enqueueing label must be one GitHub can have and not one of the state labels', () => {
    expect(enqueueingLabelProblem('merge-queue')).toBeNull();
    expect(enqueueingLabelProblem('')).toBeNull();
    expect(enqueueingLabelProblem('Mainline:queued')).toMatch(/state labels/);
    expect(enqueueingLabelProblem('x'.repeat(51))).toMatch(/50/);
    expect(enqueueingLabelProblem(' merge')).toMatch(/spaces/);
  });
});
