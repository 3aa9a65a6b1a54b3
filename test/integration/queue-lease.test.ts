import { afterEach, describe, expect, it } from 'vitest';
import type { Forge } from '../../src/app/ports.ts';
import { GitRepositoryForge } from '../../src/forge/git-repository-forge.ts';
import { LEASE_MS, QueueRunner } from '../../src/runner/queue-runner.ts';
import { acquireLease } from '../../src/store/queue/queues.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { pendingQueueActions, queueId, queueLeaseOwner } from '../support/reads.ts';

const silent = { info() {}, warn() {}, error() {} };

describe('queue leases during a long pass', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a runner whose pass outlives its lease stops when another runner took the queue', async () => {
    s = await GitScenario.create({ directMergeMode: 'off', concurrency: 2 });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Add b');
    await s.submit(1);
    await s.submit(2);
    const scenario = s;
    const db = s.t.db.database.db;
    const queue = await queueId(s.t);
    const git = new GitRepositoryForge({ root: s.t.config.gitRoot, db, now: () => scenario.clock });
    let builds = 0;
    // The first test branch takes "longer than the lease": meanwhile another runner takes the queue.
    const slow: Forge = {
      head: (...a) => git.head(...a),
      pullRequest: (...a) => git.pullRequest(...a),
      mergePullRequest: (...a) => git.mergePullRequest(...a),
      deleteBranch: (...a) => git.deleteBranch(...a),
      requiredStatuses: (...a) => git.requiredStatuses(...a),
      reportPrState: async () => {},
      buildTestBranch: async (...args) => {
        builds++;
        const built = await git.buildTestBranch(...args);
        scenario.clock += LEASE_MS + 1;
        const taken = await acquireLease(
          db,
          queue,
          'other-runner',
          scenario.clock,
          scenario.clock + LEASE_MS,
        );
        expect(taken).toBe(true);
        return built;
      },
    };
    const runner = new QueueRunner(
      { db, config: s.t.config, now: () => scenario.clock, caches: s.t.caches },
      slow,
      silent,
    );
    await runner.runOnce();
    expect(builds).toBe(1);
    expect(await queueLeaseOwner(s.t, queue)).toBe('other-runner');
    const pending = await pendingQueueActions(s.t, queue);
    expect(pending.some((p) => p.type === 'create_test_run')).toBe(true);
  });
});
