import { describe, expect, it } from 'vitest';
import type { DetectionPolicy } from '../../src/domain/health/index.ts';
import {
  defaultPolicy,
  historyWindowMs,
  matchesAnyBranch,
  matchesBranchPattern,
  passesCanActivate,
  validatePolicy,
} from '../../src/domain/health/index.ts';
import { countMonitor, DAY, HOUR, policyWithout, rateMonitor } from './health-fixtures.ts';

describe('defaultPolicy', () => {
  it('runs pass-on-retry on every branch with seven recovery days and nothing else', () => {
    expect(defaultPolicy()).toEqual({
      passOnRetry: { enabled: true, recoveryDays: 7, branches: ['*'] },
      failureRateMonitors: [],
      failureCountMonitors: [],
    });
  });

  it('is valid', () => {
    expect(validatePolicy(defaultPolicy())).toEqual([]);
  });
});

describe('monitor defaults', () => {
  it('resolves a failure-rate monitor at its activation threshold unless told otherwise', () => {
    expect(rateMonitor({ activationThreshold: 0.3 })).toMatchObject({
      resolutionThreshold: 0.3,
      staleTimeoutHours: null,
      enabled: true,
    });
  });

  it('activates a failure-count monitor on one failure unless told otherwise', () => {
    expect(countMonitor({ failureCount: undefined })).toMatchObject({ failureCount: 1, enabled: true });
  });
});

describe('validatePolicy', () => {
  const paths = (policy: DetectionPolicy) => validatePolicy(policy).map((problem) => problem.path);

  it('accepts a policy with well-formed monitors of both kinds', () => {
    const policy = policyWithout({
      failureRateMonitors: [rateMonitor()],
      failureCountMonitors: [countMonitor()],
    });
    expect(validatePolicy(policy)).toEqual([]);
  });

  it('rejects recovery days outside 1–15, with the field and what is expected', () => {
    const base = defaultPolicy();
    const problems = validatePolicy({ ...base, passOnRetry: { ...base.passOnRetry, recoveryDays: 16 } });
    expect(problems).toEqual([
      {
        path: 'passOnRetry.recoveryDays',
        expected: 'a whole number of days from 1 to 15',
        message: 'passOnRetry.recoveryDays must be a whole number of days from 1 to 15',
      },
    ]);
  });

  it('rejects a resolution threshold above the activation threshold', () => {
    const monitor = rateMonitor({ activationThreshold: 0.3, resolutionThreshold: 0.5 });
    expect(paths(policyWithout({ failureRateMonitors: [monitor] }))).toEqual([
      'failureRateMonitors[0].resolutionThreshold',
    ]);
  });

  it('rejects thresholds given as percentages rather than fractions', () => {
    const monitor = rateMonitor({ activationThreshold: 30, resolutionThreshold: 20 });
    expect(paths(policyWithout({ failureRateMonitors: [monitor] }))).toEqual([
      'failureRateMonitors[0].activationThreshold',
      'failureRateMonitors[0].resolutionThreshold',
    ]);
  });

  it('rejects a zero window, a fractional minimum sample and a negative stale timeout', () => {
    const monitor = rateMonitor({ windowHours: 0, minSampleSize: 2.5, staleTimeoutHours: -1 });
    expect(paths(policyWithout({ failureRateMonitors: [monitor] }))).toEqual([
      'failureRateMonitors[0].windowHours',
      'failureRateMonitors[0].minSampleSize',
      'failureRateMonitors[0].staleTimeoutHours',
    ]);
  });

  it('rejects a failure-count resolution timeout shorter than its window, and a count of zero', () => {
    const monitor = countMonitor({ windowHours: 6, resolutionTimeoutHours: 2, failureCount: 0 });
    expect(paths(policyWithout({ failureCountMonitors: [monitor] }))).toEqual([
      'failureCountMonitors[0].failureCount',
      'failureCountMonitors[0].resolutionTimeoutHours',
    ]);
  });

  it('rejects no branch patterns, more than ten, and blank ones', () => {
    const none = countMonitor({ branches: [] });
    const many = countMonitor({ id: 'many', branches: Array.from({ length: 11 }, (_, i) => `release/${i}`) });
    const blank = countMonitor({ id: 'blank', branches: ['main', ' '] });
    expect(paths(policyWithout({ failureCountMonitors: [none, many, blank] }))).toEqual([
      'failureCountMonitors[0].branches',
      'failureCountMonitors[1].branches',
      'failureCountMonitors[2].branches[1]',
    ]);
  });

  it('rejects duplicate monitor ids across kinds and the reserved pass-on-retry id', () => {
    const policy = policyWithout({
      failureRateMonitors: [rateMonitor({ id: 'main' }), rateMonitor({ id: 'pass_on_retry' })],
      failureCountMonitors: [countMonitor({ id: 'main' })],
    });
    expect(paths(policy)).toEqual(['failureRateMonitors[1].id', 'failureCountMonitors[0].id']);
  });

  it('rejects blank ids and names and unknown detection types', () => {
    const monitor = rateMonitor({ id: '', name: ' ', detectionType: 'slow' as 'flaky' });
    expect(paths(policyWithout({ failureRateMonitors: [monitor] }))).toEqual([
      'failureRateMonitors[0].id',
      'failureRateMonitors[0].name',
      'failureRateMonitors[0].detectionType',
    ]);
  });
});

describe('historyWindowMs', () => {
  it('covers the recovery period plus two weeks for a late retry by default', () => {
    expect(historyWindowMs(defaultPolicy())).toBe(21 * DAY);
  });

  it('covers the longest enabled monitor', () => {
    const policy = policyWithout({
      failureRateMonitors: [rateMonitor({ windowHours: 72, staleTimeoutHours: 96 })],
      failureCountMonitors: [countMonitor({ windowHours: 1, resolutionTimeoutHours: 48 })],
    });
    expect(historyWindowMs(policy)).toBe(96 * HOUR);
  });

  it('ignores disabled monitors', () => {
    const policy = policyWithout({
      failureRateMonitors: [rateMonitor({ windowHours: 500, enabled: false })],
    });
    expect(historyWindowMs(policy)).toBe(HOUR);
  });
});

describe('branch patterns', () => {
  it.each([
    ['*', 'feature/deep/nested', true],
    ['main', 'main', true],
    ['main', 'main2', false],
    ['main', 'my-main', false],
    ['release/*', 'release/1.2', true],
    ['release/*', 'release/1/hotfix', true],
    ['release/*', 'release', false],
    ['release/**', 'release/1/hotfix', true],
    ['v?', 'v1', true],
    ['v?', 'v10', false],
    ['mainline-merge/*', 'mainline-merge/main/pr-12', true],
    ['release.1', 'releaseX1', false],
    ['(a|b)', '(a|b)', true],
    ['(a|b)', 'a', false],
    ['[ab]', 'a', false],
    ['feat+x', 'feat+x', true],
  ])('%s against %s → %s', (pattern, branch, expected) => {
    expect(matchesBranchPattern(pattern, branch)).toBe(expected);
  });

  it('matches when any pattern of the scope matches, and nothing for an empty scope', () => {
    expect(matchesAnyBranch(['main', 'release/*'], 'release/2')).toBe(true);
    expect(matchesAnyBranch(['main', 'release/*'], 'feature/x')).toBe(false);
    expect(matchesAnyBranch([], 'main')).toBe(false);
  });
});

describe('passesCanActivate (which tests an upload must re-evaluate)', () => {
  it('is false for the default policy and ordinary thresholds, true when a failure-rate monitor activates at 0', () => {
    expect(passesCanActivate(defaultPolicy())).toBe(false);
    const base = defaultPolicy();
    expect(passesCanActivate({ ...base, failureRateMonitors: [rateMonitor()] })).toBe(false);
    expect(
      passesCanActivate({ ...base, failureRateMonitors: [rateMonitor({ activationThreshold: 0 })] }),
    ).toBe(true);
    expect(
      passesCanActivate({
        ...base,
        failureRateMonitors: [rateMonitor({ activationThreshold: 0, enabled: false })],
      }),
    ).toBe(false);
  });
});
