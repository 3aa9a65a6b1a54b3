import { afterEach, describe, expect, it } from 'vitest';
import { GitRepositoryForge } from '../../src/forge/git-repository-forge.ts';
import { GitHubForge } from '../../src/forge/github/index.ts';
import { RoutingForge } from '../../src/forge/router.ts';
import { OBSERVE_EVERY_MS, QueueRunner } from '../../src/runner/queue-runner.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { failedQueueActionErrors } from '../support/reads.ts';

const silent = { info() {}, warn() {}, error() {} };

describe('a server with GitHub configured still runs plain-git queues', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('merges a plain-git PR through the routing forge, with draft PRs for test branches asked for (the default)', async () => {
    s = await GitScenario.create({ directMergeMode: 'off', createPrsForTestingBranches: true });
    const scenario = s;
    const db = s.t.db.database.db;
    const now = () => scenario.clock;
    // GitHub serves another host; this repository (github.com/acme/web here) goes to plain git.
    const forge = new RoutingForge(
      new GitRepositoryForge({ root: s.t.config.gitRoot, db, now }),
      new GitHubForge({
        client: { baseUrl: 'http://127.0.0.1:9', auth: { kind: 'token', token: 'unused' }, log: silent },
      }),
      'ghe.example.com',
      // Never asked: grants are checked only for repositories on the GitHub host.
      async () => false,
    );
    const runner = new QueueRunner({ db, config: s.t.config, now, caches: s.t.caches }, forge, silent);
    const settle = async () => {
      scenario.clock += OBSERVE_EVERY_MS;
      for (let i = 0; i < 10; i++) await runner.runOnce();
    };
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await settle();
    expect((await s.pr(1)).state).toBe('testing');
    await s.ci('success');
    await settle();
    expect((await s.pr(1)).state).toBe('merged');
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
    expect(await failedQueueActionErrors(s.t)).toEqual([]);
  });
});
