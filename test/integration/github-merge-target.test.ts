/**
 * The GitHub forge's merge with expectedTargetSha, against the GitHub simulator: it reads the base
 * branch first and refuses (targetMovedTo) when someone pushed since the PR was tested, and a merge
 * repeated after its answer was lost (the base moved because of it) is still a success.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GitHubForge } from '../../src/forge/github/index.ts';
import { type GitHubSimulator, startGitHubSimulator } from '../support/github-sim/index.ts';

const silent = { info() {}, warn() {}, error() {} };
const repo = { id: 'r1', host: 'github.com', owner: 'acme', name: 'widgets' };

describe('GitHubForge.mergePullRequest with expectedTargetSha', () => {
  let sim: GitHubSimulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  async function setup() {
    const started = await startGitHubSimulator({ webhookSecret: 'x', token: 'ghp_t' });
    sim = started;
    await started.createRepo(repo.owner, repo.name, {
      defaultBranch: 'main',
      files: { 'README.md': 'hi\n' },
    });
    const number = await started.openPullRequest(repo.owner, repo.name, {
      head: 'f',
      title: 'F',
      files: { 'f.txt': 'f\n' },
    });
    const head = (await started.pullRequest(repo.owner, repo.name, number)).head.sha;
    const tested = (await started.head(repo.owner, repo.name, 'main')) ?? '';
    const forge = new GitHubForge({
      client: {
        baseUrl: started.url,
        auth: { kind: 'token', token: 'ghp_t' },
        log: silent,
        retryAfterBaseMs: 1,
        writeIntervalMs: 0,
      },
    });
    const input = {
      targetBranch: 'main',
      prNumber: number,
      prTitle: 'F',
      headSha: head,
      method: 'squash' as const,
      expectedTargetSha: tested,
    };
    return { sim: started, forge, number, input };
  }

  it('refuses with targetMovedTo when the base branch moved since the PR was tested', async () => {
    const { sim, forge, number, input } = await setup();
    const pushed = await sim.commit(repo.owner, repo.name, 'main', { 'hotfix.txt': 'x\n' }, 'Hotfix');
    const outcome = await forge.mergePullRequest(repo, input);
    expect(outcome).toEqual({ ok: false, reason: expect.stringContaining(pushed), targetMovedTo: pushed });
    expect((await sim.pullRequest(repo.owner, repo.name, number)).merged).toBe(false);
    expect(await sim.head(repo.owner, repo.name, 'main')).toBe(pushed);
  });

  it('merges on the tested tip; asked again after the answer was lost, answers the same merge', async () => {
    const { sim, forge, number, input } = await setup();
    const first = await forge.mergePullRequest(repo, input);
    expect(first.ok).toBe(true);
    expect((await sim.pullRequest(repo.owner, repo.name, number)).merged).toBe(true);
    const again = await forge.mergePullRequest(repo, input);
    expect(again).toEqual(first);
  });
});
