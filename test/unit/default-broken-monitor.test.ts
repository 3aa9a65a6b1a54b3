import { describe, expect, it } from 'vitest';
import {
  defaultPolicy,
  historyWindowMs,
  newRepositoryPolicy,
  passesCanActivate,
  validatePolicy,
} from '../../src/domain/health/index.ts';

describe('newRepositoryPolicy', () => {
  it('is the old default plus one failure-count monitor for broken tests, and valid', () => {
    const policy = newRepositoryPolicy();
    expect(validatePolicy(policy)).toEqual([]);
    expect({ ...policy, failureCountMonitors: [] }).toEqual(defaultPolicy());
    expect(policy.failureCountMonitors).toEqual([
      expect.objectContaining({
        detectionType: 'broken',
        failureCount: 4,
        windowHours: 1,
        resolutionTimeoutHours: 24,
      }),
    ]);
  });

  it('adds no work to ingestion: passes still cannot activate it, and the history window is unchanged', () => {
    expect(passesCanActivate(newRepositoryPolicy())).toBe(false);
    expect(historyWindowMs(newRepositoryPolicy())).toBe(historyWindowMs(defaultPolicy()));
  });
});
