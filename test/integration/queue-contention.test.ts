import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { useTestApp } from '../support/use-test-app.ts';

/**
 * updateQueue under contention: every call of many at once on one queue succeeds (never a 5xx), and the
 * queue ends in a state some serial order of them produces. PostgreSQL answered 500 (the optimistic save
 * lost its race more often than it retried) for a few of 25 concurrent calls.
 */
describe('updateQueue under contention', () => {
  const t = useTestApp();
  const queue = { repo: REPO, targetBranch: 'main' };

  beforeAll(async () => {
    expect((await t.post('/v1/createQueue', queue, t.orgToken)).statusCode).toBe(200);
  });

  it('25 concurrent updates to one queue all succeed and the final settings are those of a serial order', async () => {
    for (let round = 0; round < 3; round++) {
      // Update i sets concurrency to 100·round + i + 1; the even ones also set testingTimeoutMinutes.
      const patches = Array.from({ length: 25 }, (_, i) => ({
        concurrency: 100 * round + i + 1,
        ...(i % 2 === 0 ? { testingTimeoutMinutes: 1000 * (round + 1) + i } : {}),
      }));
      const answers = await Promise.all(
        patches.map((p) => t.post('/v1/updateQueue', { ...queue, ...p }, t.orgToken)),
      );
      const statuses = answers.map((a) => a.statusCode);
      expect(statuses, answers.map((a) => a.body).join('\n')).toEqual(patches.map(() => 200));

      const final = (await t.post('/v1/getQueue', queue, t.orgToken)).json();
      // The last update applied decides concurrency; the last even one applied decides the timeout,
      // so if the last one applied was even, both come from it.
      const last = final.concurrency - 100 * round - 1;
      expect(last).toBeGreaterThanOrEqual(0);
      expect(last).toBeLessThan(25);
      const timeoutFrom = final.testingTimeoutMinutes - 1000 * (round + 1);
      expect(timeoutFrom % 2).toBe(0);
      expect(timeoutFrom).toBeGreaterThanOrEqual(0);
      expect(timeoutFrom).toBeLessThan(25);
      if (last % 2 === 0) expect(timeoutFrom).toBe(last);
    }
  });
});
