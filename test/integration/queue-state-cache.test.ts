// getQueue reuses the state it parsed for a queue's version (src/app/queue/state-cache.ts). What a user
// must never notice: a state saved by another server process (which this one's cache never hears of)
// shows at once, because the version is read from the database on every request.
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { createCaches } from '../../src/app/caches.ts';
import { applyEvent } from '../../src/app/queue/apply.ts';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { queueId } from '../support/reads.ts';
import { replicaHandle, submittedPr } from '../support/replica.ts';

describe('getQueue with parsed states kept in memory', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const numbers = async (g: GitScenario) =>
    ((await g.queue()).enqueuedPullRequests as { prNumber: number }[]).map((p) => p.prNumber);

  it('shows a submission saved by another process on the next request', async () => {
    s = await GitScenario.create();
    await s.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', state: 'paused' });
    expect(await numbers(s)).toEqual([]);
    expect(await numbers(s)).toEqual([]);
    // Another replica on the same database (a handle and caches of its own, so states it saves are
    // not cached here) saves a new state: nothing in this process is told.
    const other = replicaHandle(s.t.db);
    onTestFinished(() => other.close());
    const db = other.db;
    const replica = { db, caches: createCaches(s.t.config) };
    const id = await queueId(db);
    for (const n of [7, 8]) {
      await applyEvent(replica, id, { type: 'pr_submitted', pr: submittedPr(n, 'b') }, s.clock);
      const listed = await numbers(s);
      expect(listed).toEqual(n === 7 ? [7] : [7, 8]);
    }
    await applyEvent(replica, id, { type: 'pr_cancelled', prNumber: 7, reason: 'closed' }, s.clock);
    expect(await numbers(s)).toEqual([8]);
  });

  it('answers settings changed outside the state (flake protection) at once', async () => {
    s = await GitScenario.create();
    expect((await s.queue()).flakeProtection).toBe('off');
    const db = s.t.db.database.db;
    // A column write that does not bump the state's version, as another replica's updateQueue could leave it.
    await db.updateTable('merge_queues').set({ flake_protection: 'retry_flaky' }).execute();
    expect((await s.queue()).flakeProtection).toBe('retry_flaky');
  });
});
