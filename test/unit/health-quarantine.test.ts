import { describe, expect, it } from 'vitest';
import type { QuarantineInput } from '../../src/domain/health/index.ts';
import { failureRate, pullRequestsImpacted, quarantineDecision } from '../../src/domain/health/index.ts';
import { attempt, DAY, HOUR, T0 } from './health-fixtures.ts';

function input(overrides: Partial<QuarantineInput> = {}): QuarantineInput {
  return {
    status: 'FLAKY',
    override: 'AUTO',
    settings: { quarantiningEnabled: true, autoQuarantineFlaky: true },
    ...overrides,
  };
}

describe('quarantineDecision', () => {
  it('auto-quarantines a flaky test when quarantining and auto-quarantine are on', () => {
    expect(quarantineDecision(input())).toEqual({
      quarantined: true,
      setting: 'AUTO_QUARANTINE',
      reason: 'Quarantined automatically because it is flaky',
    });
  });

  it('never auto-quarantines a broken test', () => {
    expect(quarantineDecision(input({ status: 'BROKEN' }))).toEqual({
      quarantined: false,
      setting: null,
      reason: 'Broken tests are never quarantined automatically',
    });
  });

  it('does not quarantine a healthy test automatically', () => {
    expect(quarantineDecision(input({ status: 'HEALTHY' })).quarantined).toBe(false);
  });

  it('leaves a flaky test alone when auto-quarantine is off', () => {
    const settings = { quarantiningEnabled: true, autoQuarantineFlaky: false };
    expect(quarantineDecision(input({ settings }))).toMatchObject({ quarantined: false, setting: null });
  });

  it.each(['HEALTHY', 'FLAKY', 'BROKEN'] as const)(
    'always quarantines a %s test with ALWAYS_QUARANTINE',
    (status) => {
      const settings = { quarantiningEnabled: true, autoQuarantineFlaky: false };
      expect(quarantineDecision(input({ status, override: 'ALWAYS_QUARANTINE', settings }))).toEqual({
        quarantined: true,
        setting: 'ALWAYS_QUARANTINE',
        reason: 'Always quarantined (test override)',
      });
    },
  );

  it('never quarantines a flaky test with NEVER_QUARANTINE, even with auto-quarantine on', () => {
    expect(quarantineDecision(input({ override: 'NEVER_QUARANTINE' }))).toEqual({
      quarantined: false,
      setting: null,
      reason: 'Never quarantined (test override)',
    });
  });

  it('quarantines nothing when the repository switch is off, whatever the override', () => {
    const settings = { quarantiningEnabled: false, autoQuarantineFlaky: true };
    expect(quarantineDecision(input({ override: 'ALWAYS_QUARANTINE', settings }))).toEqual({
      quarantined: false,
      setting: null,
      reason: 'Quarantining is turned off for this repository',
    });
  });
});

describe('failureRate', () => {
  it('is the fraction of non-skipped attempts in the window that failed', () => {
    const attempts = [
      attempt({ outcome: 'failed' }),
      attempt({ outcome: 'passed' }),
      attempt({ outcome: 'passed' }),
      attempt({ outcome: 'passed' }),
      attempt({ outcome: 'skipped' }),
    ];
    expect(failureRate(attempts, T0 + HOUR, DAY)).toBe(0.25);
  });

  it('is 0 when the test did not run in the window', () => {
    expect(failureRate([attempt({ outcome: 'skipped' })], T0 + HOUR, DAY)).toBe(0);
    expect(failureRate([], T0, DAY)).toBe(0);
  });

  it('leaves out attempts older than the window', () => {
    const attempts = [
      attempt({ outcome: 'failed', at: T0 - DAY }),
      attempt({ outcome: 'passed', at: T0 - HOUR }),
    ];
    expect(failureRate(attempts, T0, DAY)).toBe(0);
    expect(failureRate(attempts, T0, 7 * DAY)).toBe(0.5);
  });
});

describe('pullRequestsImpacted', () => {
  it('counts distinct pull requests with at least one failure in the window', () => {
    const attempts = [
      attempt({ prNumber: 1, outcome: 'failed' }),
      attempt({ prNumber: 1, outcome: 'failed' }),
      attempt({ prNumber: 2, outcome: 'failed' }),
      attempt({ prNumber: 3, outcome: 'passed' }),
      attempt({ prNumber: null, outcome: 'failed' }),
      attempt({ prNumber: 4, outcome: 'failed', at: T0 - 8 * DAY }),
    ];
    expect(pullRequestsImpacted(attempts, T0 + HOUR, 7 * DAY)).toBe(2);
  });
});
