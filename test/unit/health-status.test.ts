import { describe, expect, it } from 'vitest';
import type { Attempt, DetectionPolicy, HealthSnapshot } from '../../src/domain/health/index.ts';
import { defaultPolicy, evaluateHealth } from '../../src/domain/health/index.ts';
import {
  attempt,
  countMonitor,
  DAY,
  flag,
  HOUR,
  MINUTE,
  policyWithout,
  rateMonitor,
  runs,
  snapshot,
  T0,
  timeline,
} from './health-fixtures.ts';

const SHA = '1a2b3c4d5e6f7081920a1b2c3d4e5f6071829304';
const flakyPair = (at: number): Attempt[] => [
  attempt({ commitSha: SHA, outcome: 'failed', at }),
  attempt({ commitSha: SHA, outcome: 'passed', at: at + MINUTE }),
];

describe('status from several monitors', () => {
  const policy = (): DetectionPolicy => ({
    ...defaultPolicy(),
    failureCountMonitors: [countMonitor({ failureCount: 1, windowHours: 1 })],
  });

  it('is BROKEN while a broken and a flaky monitor are both active, then FLAKY once the broken one resolves', () => {
    const test = timeline(policy());
    const both = test.at(T0 + HOUR, { add: flakyPair(T0) });
    expect(both.status.value).toBe('BROKEN');
    expect(Object.values(both.monitors).map((state) => state.kind)).toEqual(['active', 'active']);
    const downgraded = test.at(T0 + 2 * DAY);
    expect(downgraded.transition).toEqual({
      from: 'BROKEN',
      to: 'FLAKY',
      at: T0 + DAY,
      reason:
        'Resolved: no failure on main for 1 day (monitor: Failing on main); ' +
        'still flaky: Failed and passed on the same commit 1a2b3c4 on main',
      trigger: {
        kind: 'monitor',
        monitorId: 'count-main',
        monitorType: 'failure_count',
        monitorStatus: 'resolved',
      },
    });
    expect(test.at(T0 + 8 * DAY).status.value).toBe('HEALTHY');
  });

  it('goes from FLAKY to BROKEN when a broken monitor activates later', () => {
    const test = timeline({ ...policy(), failureCountMonitors: [countMonitor()] });
    test.at(T0 + HOUR, { add: flakyPair(T0) });
    const result = test.at(T0 + 3 * HOUR, { add: runs(3, { outcome: 'failed', from: T0 + 2 * HOUR }) });
    expect(result.transition).toMatchObject({ from: 'FLAKY', to: 'BROKEN', at: T0 + 2 * HOUR + 2 * MINUTE });
  });

  it('starts a new test as HEALTHY without recording a transition', () => {
    const result = evaluateHealth(snapshot({ attempts: [attempt({ at: T0 })] }), defaultPolicy(), T0 + HOUR);
    expect(result.status).toEqual({
      value: 'HEALTHY',
      reason: 'No monitor has flagged this test',
      timestamp: T0,
    });
    expect(result.transition).toBeNull();
  });
});

describe('manual flag', () => {
  it('forces FLAKY and says who flagged it and why', () => {
    const test = timeline(defaultPolicy());
    test.at(T0, { add: [attempt({ at: T0 - HOUR })] });
    const result = test.at(T0 + HOUR, { manualFlag: flag({ at: T0 + 30 * MINUTE }) });
    expect(result.status).toEqual({
      value: 'FLAKY',
      reason: 'Manually flagged as flaky by alice: times out on CI',
      timestamp: T0 + 30 * MINUTE,
    });
    expect(result.transition?.trigger).toEqual({ kind: 'manual_flag', flagged: true, by: 'alice' });
  });

  it('falls back to HEALTHY when the flag is removed and no monitor is active', () => {
    const test = timeline(defaultPolicy());
    test.at(T0, { manualFlag: flag({ at: T0 }) });
    const result = test.at(T0 + HOUR, { manualFlag: flag({ flagged: false, by: 'bob', at: T0 + HOUR }) });
    expect(result.status).toEqual({
      value: 'HEALTHY',
      reason: 'Flaky flag removed by bob',
      timestamp: T0 + HOUR,
    });
  });

  it('stays FLAKY when the flag is removed while a monitor still flags the test', () => {
    const test = timeline(defaultPolicy());
    test.at(T0 + HOUR, { add: flakyPair(T0), manualFlag: flag({ at: T0 + HOUR }) });
    const result = test.at(T0 + 2 * HOUR, { manualFlag: flag({ flagged: false, at: T0 + 2 * HOUR }) });
    expect(result.status.value).toBe('FLAKY');
    expect(result.transition).toBeNull();
  });

  it('does not lower a BROKEN test to FLAKY', () => {
    const policy = policyWithout({ failureCountMonitors: [countMonitor()] });
    const result = evaluateHealth(
      snapshot({ attempts: runs(3, { outcome: 'failed', from: T0 }), manualFlag: flag() }),
      policy,
      T0 + HOUR,
    );
    expect(result.status.value).toBe('BROKEN');
  });

  it('words a flag without a reason or author plainly', () => {
    const result = evaluateHealth(snapshot({ manualFlag: { flagged: true, at: T0 } }), defaultPolicy(), T0);
    expect(result.status.reason).toBe('Manually flagged as flaky');
  });
});

describe('evaluation is repeatable', () => {
  const everything = (): DetectionPolicy => ({
    passOnRetry: { enabled: true, recoveryDays: 3, branches: ['main', 'feature/*'] },
    failureRateMonitors: [
      rateMonitor({
        activationThreshold: 0.6,
        resolutionThreshold: 0.3,
        minSampleSize: 5,
        staleTimeoutHours: 12,
      }),
      rateMonitor({
        id: 'flaky-all',
        name: 'Flaky',
        detectionType: 'flaky',
        activationThreshold: 0.2,
        branches: ['*'],
        minSampleSize: 5,
      }),
    ],
    failureCountMonitors: [countMonitor({ failureCount: 2, windowHours: 2, resolutionTimeoutHours: 12 })],
  });

  /** A deterministic pseudo-random history: a few commits per day, some retried, some failing. */
  function history(seed: number, days: number): Attempt[] {
    let state = seed;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const attempts: Attempt[] = [];
    for (let i = 0; i < days * 6; i++) {
      const at = T0 + Math.floor(random() * days * DAY);
      const branch = random() < 0.5 ? 'main' : 'feature/x';
      const commitSha = `sha-${i}`;
      const tries = random() < 0.3 ? 2 : 1;
      for (let retryIndex = 0; retryIndex < tries; retryIndex++) {
        const outcome = random() < 0.35 ? 'failed' : 'passed';
        attempts.push(attempt({ at: at + retryIndex * MINUTE, branch, commitSha, outcome, retryIndex }));
      }
    }
    return attempts;
  }

  /** Feeds the history in upload order, evaluating after each upload and every six hours. */
  function replay(attempts: Attempt[], policy: DetectionPolicy): HealthSnapshot[] {
    const test = timeline(policy);
    const snapshots: HealthSnapshot[] = [];
    const byTime = [...attempts].sort((a, b) => a.at - b.at);
    for (let now = T0; now <= T0 + 12 * DAY; now += 6 * HOUR) {
      test.at(now, { add: byTime.filter((a) => a.at > now - 6 * HOUR && a.at <= now) });
      snapshots.push(test.snapshot);
    }
    return snapshots;
  }

  it('changes nothing when evaluated again with the same snapshot and time', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const policy = everything();
      for (const [i, stored] of replay(history(seed, 10), policy).entries()) {
        const now = T0 + i * 6 * HOUR;
        const again = evaluateHealth(stored, policy, now);
        expect(again.transition, `seed ${seed} step ${i}`).toBeNull();
        expect(again.monitorChanges).toEqual([]);
        expect(again.monitors).toEqual(stored.monitors);
        expect(again.status).toEqual(stored.status);
      }
    }
  });

  it('does not depend on the order of the attempts in the snapshot', () => {
    const attempts = history(7, 10);
    const forward = evaluateHealth(snapshot({ attempts }), everything(), T0 + 10 * DAY);
    const backward = evaluateHealth(
      snapshot({ attempts: [...attempts].reverse() }),
      everything(),
      T0 + 10 * DAY,
    );
    expect(backward).toEqual(forward);
  });

  it('reaches the same status from gradual uploads as from the whole history at once (event monitors)', () => {
    // Failure-rate monitors are left out on purpose: their hysteresis band depends on the path taken.
    const eventMonitors = (): DetectionPolicy => ({ ...everything(), failureRateMonitors: [] });
    const seen = new Set<string>();
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      const attempts = history(seed, 10);
      for (const [i, gradual] of replay(attempts, eventMonitors()).entries()) {
        const now = T0 + i * 6 * HOUR;
        const sofar = snapshot({ attempts: attempts.filter((a) => a.at <= now) });
        const atOnce = evaluateHealth(sofar, eventMonitors(), now);
        expect(atOnce.status.value, `seed ${seed} step ${i}`).toBe(gradual.status?.value);
        seen.add(atOnce.status.value);
      }
    }
    expect([...seen].sort()).toEqual(['BROKEN', 'FLAKY', 'HEALTHY']);
  });

  it('reaches the same final status when uploads arrive late and out of order (event monitors)', () => {
    const eventMonitors = (): DetectionPolicy => ({ ...everything(), failureRateMonitors: [] });
    const end = T0 + 10 * DAY;
    const seen = new Set<string>();
    for (const seed of [21, 22, 23, 24, 25, 26, 27, 28]) {
      const attempts = history(seed, 10);
      const test = timeline(eventMonitors());
      // Upload the commits in a scrambled order, one batch per hour, evaluating after each.
      const batches = [0, 1, 2, 3].map((k) => attempts.filter((_, i) => (i * 7 + seed) % 4 === k));
      for (const [k, batch] of batches.entries()) test.at(end - (4 - k) * HOUR, { add: batch });
      const gradual = test.at(end);
      const atOnce = evaluateHealth(snapshot({ attempts }), eventMonitors(), end);
      expect(gradual.status.value, `seed ${seed}`).toBe(atOnce.status.value);
      seen.add(atOnce.status.value);
    }
    expect(seen.size).toBeGreaterThan(1);
  });
});
