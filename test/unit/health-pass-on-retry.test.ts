import { describe, expect, it } from 'vitest';
import { defaultPolicy, evaluateHealth, passOnRetryEvents } from '../../src/domain/health/index.ts';
import { attempt, DAY, HOUR, MINUTE, newSha, snapshot, T0, timeline } from './health-fixtures.ts';

const SHA = '1a2b3c4d5e6f7081920a1b2c3d4e5f6071829304';

describe('pass-on-retry monitor', () => {
  it('flags a test that failed and then passed on the same commit, naming the commit and branch', () => {
    const test = timeline(defaultPolicy());
    const result = test.at(T0 + HOUR, {
      add: [
        attempt({ commitSha: SHA, outcome: 'failed', at: T0 }),
        attempt({ commitSha: SHA, outcome: 'passed', at: T0 + 10 * MINUTE }),
      ],
    });
    expect(result.status).toEqual({
      value: 'FLAKY',
      reason: 'Failed and passed on the same commit 1a2b3c4 on main',
      timestamp: T0 + 10 * MINUTE,
    });
    expect(result.transition).toEqual({
      from: 'HEALTHY',
      to: 'FLAKY',
      at: T0 + 10 * MINUTE,
      reason: 'Failed and passed on the same commit 1a2b3c4 on main',
      trigger: {
        kind: 'monitor',
        monitorId: 'pass_on_retry',
        monitorType: 'pass_on_retry',
        monitorStatus: 'active',
      },
    });
  });

  it('flags a retry inside one upload and names the pull request', () => {
    const result = evaluateHealth(
      snapshot({
        attempts: [
          attempt({
            commitSha: SHA,
            branch: 'feature/login',
            prNumber: 42,
            outcome: 'failed',
            retryIndex: 0,
          }),
          attempt({
            commitSha: SHA,
            branch: 'feature/login',
            prNumber: 42,
            outcome: 'passed',
            retryIndex: 1,
          }),
        ],
      }),
      defaultPolicy(),
      T0 + MINUTE,
    );
    expect(result.status.reason).toBe(
      'Failed and passed on the same commit 1a2b3c4 on feature/login (PR #42)',
    );
  });

  it('flags a pass followed by a failure on the same commit just the same', () => {
    const test = timeline(defaultPolicy());
    const result = test.at(T0 + HOUR, {
      add: [
        attempt({ commitSha: SHA, outcome: 'passed', at: T0 }),
        attempt({ commitSha: SHA, outcome: 'failed', at: T0 + 5 * MINUTE }),
      ],
    });
    expect(result.status.value).toBe('FLAKY');
  });

  it('does not flag a failure and a pass on different commits', () => {
    const result = evaluateHealth(
      snapshot({
        attempts: [attempt({ outcome: 'failed', at: T0 }), attempt({ outcome: 'passed', at: T0 + MINUTE })],
      }),
      defaultPolicy(),
      T0 + HOUR,
    );
    expect(result.status.value).toBe('HEALTHY');
    expect(result.transition).toBeNull();
  });

  it('does not count a skipped run as a pass', () => {
    const result = evaluateHealth(
      snapshot({
        attempts: [
          attempt({ commitSha: SHA, outcome: 'failed' }),
          attempt({ commitSha: SHA, outcome: 'skipped' }),
        ],
      }),
      defaultPolicy(),
      T0 + HOUR,
    );
    expect(result.status.value).toBe('HEALTHY');
  });

  it('still detects the pair when the retry is uploaded three days after the failure', () => {
    const test = timeline(defaultPolicy());
    expect(
      test.at(T0 + HOUR, { add: [attempt({ commitSha: SHA, outcome: 'failed', at: T0 })] }).status.value,
    ).toBe('HEALTHY');
    const late = test.at(T0 + 3 * DAY, {
      add: [attempt({ commitSha: SHA, outcome: 'passed', at: T0 + 3 * DAY })],
    });
    expect(late.status.value).toBe('FLAKY');
    expect(late.status.timestamp).toBe(T0 + 3 * DAY);
  });

  it('dates the detection by run time when the failing run arrives after the passing one', () => {
    const test = timeline(defaultPolicy());
    test.at(T0 + HOUR, { add: [attempt({ commitSha: SHA, outcome: 'passed', at: T0 })] });
    const late = test.at(T0 + 2 * DAY, {
      add: [attempt({ commitSha: SHA, outcome: 'failed', at: T0 + 30 * MINUTE })],
    });
    expect(late.status).toMatchObject({ value: 'FLAKY', timestamp: T0 + 30 * MINUTE });
  });

  it('counts many retries of one commit as one event', () => {
    const attempts = [0, 1, 2, 3].map((i) =>
      attempt({ commitSha: SHA, outcome: i % 2 === 0 ? 'failed' : 'passed', at: T0 + i * MINUTE }),
    );
    expect(passOnRetryEvents(attempts, ['*'])).toEqual([
      { at: T0 + MINUTE, commitSha: SHA, branch: 'main', prNumber: null },
    ]);
  });

  it('recovers after seven days without a new event, dated when the seven days ran out', () => {
    const test = timeline(defaultPolicy());
    const flakyAt = T0 + MINUTE;
    test.at(flakyAt, {
      add: [attempt({ commitSha: SHA, outcome: 'failed' }), attempt({ commitSha: SHA, at: flakyAt })],
    });
    expect(test.at(flakyAt + 6 * DAY).status.value).toBe('FLAKY');
    const recovered = test.at(flakyAt + 7 * DAY + 3 * HOUR);
    expect(recovered.status).toEqual({
      value: 'HEALTHY',
      reason: 'Recovered: no pass-on-retry event for 7 days',
      timestamp: flakyAt + 7 * DAY,
    });
    expect(recovered.transition?.trigger).toEqual({
      kind: 'monitor',
      monitorId: 'pass_on_retry',
      monitorType: 'pass_on_retry',
      monitorStatus: 'resolved',
    });
  });

  it('keeps the test flaky while new events keep arriving within the recovery period', () => {
    const test = timeline(defaultPolicy());
    const pair = (at: number) => {
      const sha = newSha();
      return [
        attempt({ commitSha: sha, outcome: 'failed', at }),
        attempt({ commitSha: sha, at: at + MINUTE }),
      ];
    };
    test.at(T0 + HOUR, { add: pair(T0) });
    test.at(T0 + 5 * DAY, { add: pair(T0 + 5 * DAY) });
    const later = test.at(T0 + 9 * DAY);
    expect(later.status).toMatchObject({ value: 'FLAKY', timestamp: T0 + MINUTE });
    expect(later.transition).toBeNull();
  });

  it('uses the configured recovery period', () => {
    const base = defaultPolicy();
    const policy = { ...base, passOnRetry: { ...base.passOnRetry, recoveryDays: 2 } };
    const test = timeline(policy);
    test.at(T0 + HOUR, {
      add: [attempt({ commitSha: SHA, outcome: 'failed' }), attempt({ commitSha: SHA })],
    });
    const result = test.at(T0 + 2 * DAY + HOUR);
    expect(result.status).toMatchObject({
      value: 'HEALTHY',
      reason: 'Recovered: no pass-on-retry event for 2 days',
    });
  });

  it('flags again when a new event comes after recovery', () => {
    const test = timeline(defaultPolicy());
    test.at(T0 + HOUR, {
      add: [attempt({ commitSha: SHA, outcome: 'failed' }), attempt({ commitSha: SHA })],
    });
    test.at(T0 + 8 * DAY);
    const sha = newSha();
    const again = test.at(T0 + 9 * DAY, {
      add: [
        attempt({ commitSha: sha, outcome: 'failed', at: T0 + 9 * DAY - HOUR }),
        attempt({ commitSha: sha, at: T0 + 9 * DAY }),
      ],
    });
    expect(again.transition).toMatchObject({ from: 'HEALTHY', to: 'FLAKY', at: T0 + 9 * DAY });
  });
});

describe('pass-on-retry branch scope', () => {
  const scoped = () => {
    const base = defaultPolicy();
    return { ...base, passOnRetry: { ...base.passOnRetry, branches: ['main', 'mainline-merge/*'] } };
  };
  const pairOn = (branch: string) => [
    attempt({ commitSha: SHA, branch, outcome: 'failed' }),
    attempt({ commitSha: SHA, branch, at: T0 + MINUTE }),
  ];

  it('ignores events on branches outside the scope', () => {
    const result = evaluateHealth(snapshot({ attempts: pairOn('feature/login') }), scoped(), T0 + HOUR);
    expect(result.status.value).toBe('HEALTHY');
  });

  it('counts merge-queue test branches matched by a glob that crosses slashes', () => {
    const result = evaluateHealth(
      snapshot({ attempts: pairOn('mainline-merge/main/pr-12-13') }),
      scoped(),
      T0 + HOUR,
    );
    expect(result.status).toMatchObject({
      value: 'FLAKY',
      reason: 'Failed and passed on the same commit 1a2b3c4 on mainline-merge/main/pr-12-13',
    });
  });

  it('resolves at once when the monitor is disabled', () => {
    const test = timeline(defaultPolicy());
    test.at(T0 + HOUR, { add: pairOn('main') });
    const base = defaultPolicy();
    const off = { ...base, passOnRetry: { ...base.passOnRetry, enabled: false } };
    const result = test.at(T0 + 2 * HOUR, { policy: off });
    expect(result.status).toEqual({
      value: 'HEALTHY',
      reason: 'Resolved: the pass-on-retry monitor was disabled',
      timestamp: T0 + 2 * HOUR,
    });
  });
});
