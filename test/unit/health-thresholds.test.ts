import { describe, expect, it } from 'vitest';
import type { Attempt, HealthSnapshot } from '../../src/domain/health/index.ts';
import { evaluateHealth, historyWindowMs } from '../../src/domain/health/index.ts';
import {
  attempt,
  countMonitor,
  DAY,
  HOUR,
  MINUTE,
  policyWithout,
  rateMonitor,
  runs,
  snapshot,
  T0,
  timeline,
} from './health-fixtures.ts';

describe('failure-rate monitor', () => {
  const policy = () => policyWithout({ failureRateMonitors: [rateMonitor({ resolutionThreshold: 0.5 })] });

  it('does not flag below the minimum sample, however bad the rate', () => {
    const result = evaluateHealth(
      snapshot({ attempts: runs(9, { outcome: 'failed', from: T0 }) }),
      policy(),
      T0 + HOUR,
    );
    expect(result.status.value).toBe('HEALTHY');
  });

  it('flags BROKEN once the rate reaches the activation threshold over enough runs', () => {
    const attempts = [...runs(9, { outcome: 'failed', from: T0 }), attempt({ at: T0 + 20 * MINUTE })];
    const result = evaluateHealth(snapshot({ attempts }), policy(), T0 + HOUR);
    expect(result.status).toEqual({
      value: 'BROKEN',
      reason: 'Failure rate 90% ≥ 80% over the last 6 h on main (10 runs; monitor: Broken on main)',
      timestamp: T0 + HOUR,
    });
    expect(result.transition?.trigger).toEqual({
      kind: 'monitor',
      monitorId: 'broken-main',
      monitorType: 'failure_rate',
      monitorStatus: 'active',
    });
  });

  it('keeps the status inside the hysteresis band and resolves below the resolution threshold', () => {
    const test = timeline(policy());
    test.at(T0 + HOUR, { add: runs(10, { outcome: 'failed', from: T0 }) });
    const inBand = test.at(T0 + 2 * HOUR, { add: runs(5, { outcome: 'passed', from: T0 + HOUR }) });
    expect(inBand.status.value).toBe('BROKEN');
    expect(inBand.transition).toBeNull();
    const resolved = test.at(T0 + 3 * HOUR, { add: runs(11, { outcome: 'passed', from: T0 + 2 * HOUR }) });
    expect(resolved.status).toEqual({
      value: 'HEALTHY',
      reason:
        'Resolved: failure rate 38.5% < 50% over the last 6 h on main (26 runs; monitor: Broken on main)',
      timestamp: T0 + 3 * HOUR,
    });
  });

  it('resolves as soon as the rate drops below the activation threshold when no resolution threshold is set', () => {
    const test = timeline(policyWithout({ failureRateMonitors: [rateMonitor()] }));
    test.at(T0 + HOUR, { add: runs(10, { outcome: 'failed', from: T0 }) });
    const result = test.at(T0 + 2 * HOUR, { add: runs(3, { outcome: 'passed', from: T0 + HOUR }) });
    expect(result.status.value).toBe('HEALTHY');
  });

  it('neither flags nor resolves while the window holds fewer runs than the minimum sample', () => {
    const test = timeline(policy());
    test.at(T0 + HOUR, { add: runs(10, { outcome: 'failed', from: T0 }) });
    const result = test.at(T0 + 10 * HOUR, { add: runs(3, { outcome: 'passed', from: T0 + 9 * HOUR }) });
    expect(result.status.value).toBe('BROKEN');
  });

  it('pools only the runs of the scoped branches', () => {
    const attempts = [
      ...runs(10, { outcome: 'failed', branch: 'feature/a', from: T0 }),
      ...runs(10, { outcome: 'passed', branch: 'main', from: T0 }),
    ];
    const result = evaluateHealth(snapshot({ attempts }), policy(), T0 + HOUR);
    expect(result.status.value).toBe('HEALTHY');
  });

  it('ignores runs older than the window', () => {
    const attempts = runs(10, { outcome: 'failed', from: T0 - 7 * HOUR });
    const result = evaluateHealth(snapshot({ attempts }), policy(), T0);
    expect(result.status.value).toBe('HEALTHY');
  });

  it('classifies as FLAKY when the monitor detects flakiness', () => {
    const flaky = rateMonitor({
      id: 'flaky-main',
      name: 'Flaky on main',
      detectionType: 'flaky',
      activationThreshold: 0.3,
    });
    const attempts = [...runs(4, { outcome: 'failed', from: T0 }), ...runs(6, { from: T0 + HOUR })];
    const result = evaluateHealth(
      snapshot({ attempts }),
      policyWithout({ failureRateMonitors: [flaky] }),
      T0 + 2 * HOUR,
    );
    expect(result.status).toMatchObject({
      value: 'FLAKY',
      reason: 'Failure rate 40% ≥ 30% over the last 6 h on main (10 runs; monitor: Flaky on main)',
    });
  });

  it('resolves as stale after the stale timeout without any run, dated when the timeout ran out', () => {
    const test = timeline(policyWithout({ failureRateMonitors: [rateMonitor({ staleTimeoutHours: 24 })] }));
    test.at(T0 + HOUR, { add: runs(10, { outcome: 'failed', from: T0 }) });
    expect(test.at(T0 + 20 * HOUR).status.value).toBe('BROKEN');
    const stale = test.at(T0 + 2 * DAY);
    expect(stale.status).toEqual({
      value: 'HEALTHY',
      reason: 'Resolved: no runs on main for 1 day (stale; monitor: Broken on main)',
      timestamp: T0 + 9 * MINUTE + DAY,
    });
  });

  it('does not treat skipped runs as runs for the stale timeout or the rate', () => {
    const test = timeline(policyWithout({ failureRateMonitors: [rateMonitor({ staleTimeoutHours: 24 })] }));
    test.at(T0 + HOUR, { add: runs(10, { outcome: 'failed', from: T0 }) });
    const result = test.at(T0 + 2 * DAY, {
      add: runs(20, { outcome: 'skipped', from: T0 + 2 * DAY - HOUR }),
    });
    expect(result.status.value).toBe('HEALTHY');
  });
});

const countPolicy = () => policyWithout({ failureCountMonitors: [countMonitor()] });

describe('failure-count monitor', () => {
  const policy = countPolicy;

  it('flags BROKEN when the count is reached within the window, dated at the failure that reached it', () => {
    const attempts = runs(3, { outcome: 'failed', from: T0 });
    const result = evaluateHealth(snapshot({ attempts }), policy(), T0 + HOUR);
    expect(result.status).toEqual({
      value: 'BROKEN',
      reason: '3 failures within 30 min on main (monitor: Failing on main)',
      timestamp: T0 + 2 * MINUTE,
    });
  });

  it('does not flag fewer failures than the count', () => {
    const result = evaluateHealth(
      snapshot({ attempts: runs(2, { outcome: 'failed', from: T0 }) }),
      policy(),
      T0 + HOUR,
    );
    expect(result.status.value).toBe('HEALTHY');
  });

  it('does not flag the same number of failures spread wider than the window', () => {
    const attempts = [0, 20, 40].map((minutes) => attempt({ outcome: 'failed', at: T0 + minutes * MINUTE }));
    const result = evaluateHealth(snapshot({ attempts }), policy(), T0 + HOUR);
    expect(result.status.value).toBe('HEALTHY');
  });

  it('flags on a single failure with the default count of one', () => {
    const single = countMonitor({ failureCount: undefined, windowHours: 1 });
    const result = evaluateHealth(
      snapshot({ attempts: [attempt({ outcome: 'failed' })] }),
      policyWithout({ failureCountMonitors: [single] }),
      T0 + MINUTE,
    );
    expect(result.status).toMatchObject({
      value: 'BROKEN',
      reason: '1 failure on main (monitor: Failing on main)',
    });
  });

  it('resolves once the resolution timeout passes with no new failure', () => {
    const test = timeline(policy());
    test.at(T0 + HOUR, { add: runs(3, { outcome: 'failed', from: T0 }) });
    expect(test.at(T0 + 20 * HOUR).status.value).toBe('BROKEN');
    const resolved = test.at(T0 + 30 * HOUR);
    expect(resolved.status).toEqual({
      value: 'HEALTHY',
      reason: 'Resolved: no failure on main for 1 day (monitor: Failing on main)',
      timestamp: T0 + 2 * MINUTE + DAY,
    });
  });

  it('restarts the resolution clock on every new failure, even one that would not reach the count alone', () => {
    const test = timeline(policy());
    test.at(T0 + HOUR, { add: runs(3, { outcome: 'failed', from: T0 }) });
    test.at(T0 + 20 * HOUR, { add: [attempt({ outcome: 'failed', at: T0 + 20 * HOUR })] });
    expect(test.at(T0 + 30 * HOUR).status.value).toBe('BROKEN');
    const resolved = test.at(T0 + 50 * HOUR);
    expect(resolved.status).toMatchObject({ value: 'HEALTHY', timestamp: T0 + 44 * HOUR });
  });

  it('stays active through a long run of failures after the burst that triggered it is no longer loaded', () => {
    const policy = countPolicy();
    const all: Attempt[] = [...runs(3, { outcome: 'failed', from: T0 })];
    for (let hours = 20; hours <= 100; hours += 20)
      all.push(attempt({ outcome: 'failed', at: T0 + hours * HOUR }));
    let stored: HealthSnapshot = snapshot();
    for (let now = T0 + HOUR; now <= T0 + 110 * HOUR; now += 10 * HOUR) {
      // The store loads only what historyWindowMs asks for.
      const attempts = all.filter((a) => a.at <= now && a.at > now - historyWindowMs(policy));
      const result = evaluateHealth({ ...stored, attempts }, policy, now);
      stored = { ...stored, monitors: result.monitors, status: result.status };
      expect(result.status.value, `at +${(now - T0) / HOUR} h`).toBe('BROKEN');
    }
  });

  it('ignores failures on branches outside its scope', () => {
    const attempts = runs(3, { outcome: 'failed', branch: 'feature/x', from: T0 });
    const result = evaluateHealth(snapshot({ attempts }), policy(), T0 + HOUR);
    expect(result.status.value).toBe('HEALTHY');
  });

  it('resolves at once when disabled', () => {
    const test = timeline(policy());
    test.at(T0 + HOUR, { add: runs(3, { outcome: 'failed', from: T0 }) });
    const off = policyWithout({ failureCountMonitors: [countMonitor({ enabled: false })] });
    const result = test.at(T0 + 2 * HOUR, { policy: off });
    expect(result.status).toEqual({
      value: 'HEALTHY',
      reason: 'Resolved: monitor Failing on main was disabled',
      timestamp: T0 + 2 * HOUR,
    });
    expect(test.snapshot.monitors['count-main']?.kind).toBe('resolved');
  });

  it('resolves at once and forgets its state when deleted from the policy', () => {
    const test = timeline(policy());
    test.at(T0 + HOUR, { add: runs(3, { outcome: 'failed', from: T0 }) });
    const result = test.at(T0 + 2 * HOUR, { policy: policyWithout() });
    expect(result.status).toMatchObject({
      value: 'HEALTHY',
      reason: 'Resolved: the monitor that flagged this test was removed',
    });
    expect(result.transition?.trigger).toMatchObject({
      kind: 'monitor',
      monitorId: 'count-main',
      monitorStatus: 'resolved',
    });
    expect(result.monitors).toEqual({});
  });
});
