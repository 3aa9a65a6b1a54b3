import type { BuildOutcome, ForgeRepo } from '../../app/ports.ts';
import { DEFAULT_IDENTITY, DEFAULT_TIMEOUT_MS, type GitContext, runGit } from '../git/git.ts';
import { GitForge, isSha } from '../git/index.ts';
import { isAncestor } from '../git/objects.ts';
import type { GitLabClient } from './client.ts';
import { type GlProjectSettings, projectPath } from './project.ts';

export interface TestBranchOptions {
  /** Folder of the forge's own clones (bare), one per repository. */
  mirrorRoot: string;
  /** The git remote of a repository (never taken from API answers). */
  remoteUrl: (repo: ForgeRepo) => string;
  gitTimeoutMs?: number;
  /** Push with `ci.skip` and create the test branch's pipeline through the API. */
  createPipelines?: boolean;
}

/**
 * Test branches built with real git in a bare clone kept per repository and pushed to GitLab, the
 * way the project's merge method will land them; and their pipelines where pushes start none.
 */
export class GitLabTestBranches {
  readonly #client: GitLabClient;
  readonly #settings: (repo: ForgeRepo) => Promise<GlProjectSettings>;
  readonly #mirrors: GitForge;
  readonly #remoteUrl: (repo: ForgeRepo) => string;
  readonly #gitTimeoutMs: number;
  readonly #createPipelines: boolean;

  constructor(
    client: GitLabClient,
    settings: (repo: ForgeRepo) => Promise<GlProjectSettings>,
    options: TestBranchOptions,
  ) {
    this.#client = client;
    this.#settings = settings;
    this.#mirrors = new GitForge({ root: options.mirrorRoot, timeoutMs: options.gitTimeoutMs });
    this.#remoteUrl = options.remoteUrl;
    this.#gitTimeoutMs = options.gitTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#createPipelines = options.createPipelines ?? false;
  }

  #git(repo: ForgeRepo): GitContext {
    return {
      gitDir: this.#mirrors.repoPath(repo),
      identity: DEFAULT_IDENTITY,
      timeoutMs: this.#gitTimeoutMs,
    };
  }

  /** Runs git against the remote with the token as an HTTP header (never in the URL or arguments). */
  async #remoteGit(repo: ForgeRepo, args: string[]): Promise<void> {
    await runGit(this.#git(repo), args, {
      env: {
        GIT_CONFIG_COUNT: '1',
        // Scoped to the instance's URL, so the token is never sent to another host.
        GIT_CONFIG_KEY_0: `http.${this.#client.baseUrl}/.extraHeader`,
        GIT_CONFIG_VALUE_0: this.#client.gitAuthHeader(),
      },
    });
  }

  async #has(repo: ForgeRepo, sha: string): Promise<boolean> {
    const res = await runGit(this.#git(repo), ['cat-file', '-e', `${sha}^{commit}`], { okCodes: [1, 128] });
    return res.code === 0;
  }

  /**
   * Brings the commits into the clone: the branches, and each merge request's head ref (GitLab keeps
   * refs/merge-requests/<iid>/head, forks included). Skipped when every commit is there already.
   */
  async #fetch(repo: ForgeRepo, shas: readonly string[], iids: readonly number[]): Promise<void> {
    await this.#mirrors.ensureRepository(repo);
    let missing = false;
    for (const sha of shas) if (!(await this.#has(repo, sha))) missing = true;
    if (!missing) return;
    await this.#remoteGit(repo, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--prune',
      this.#remoteUrl(repo),
      '+refs/heads/*:refs/remotes/origin/*',
      ...iids.map((n) => `+refs/merge-requests/${n}/head:refs/remotes/merge-requests/${n}`),
    ]);
  }

  async buildTestBranch(
    repo: ForgeRepo,
    input: { testBranch: string; baseSha: string; prHeads: readonly { number: number; sha: string }[] },
  ): Promise<BuildOutcome> {
    for (const sha of [input.baseSha, ...input.prHeads.map((p) => p.sha)]) {
      if (!isSha(sha)) return { ok: false, conflictPr: null, reason: `not a commit SHA: ${sha}` };
    }
    await this.#fetch(
      repo,
      [input.baseSha, ...input.prHeads.map((p) => p.sha)],
      input.prHeads.map((p) => p.number),
    );
    const method = (await this.#settings(repo)).merge_method ?? 'merge';
    const built =
      method === 'merge'
        ? await this.#mirrors.buildTestBranch(repo, {
            testBranch: input.testBranch,
            baseSha: input.baseSha,
            prHeads: [...input.prHeads],
            message: 'Merge merge request',
          })
        : await this.#linearTestBranch(repo, input, method);
    if (!built.ok) return built;
    await this.#remoteGit(repo, [
      'push',
      '--quiet',
      '--force',
      // The pipeline is created through the API below instead, so it runs once.
      ...(this.#createPipelines ? ['-o', 'ci.skip'] : []),
      this.#remoteUrl(repo),
      `${built.sha}:refs/heads/${input.testBranch}`,
    ]);
    if (this.#createPipelines) {
      await this.#client.request(
        'POST',
        `${projectPath(repo)}/pipeline?ref=${encodeURIComponent(input.testBranch)}`,
      );
    }
    return built;
  }

  /**
   * A project that merges fast-forward or with semi-linear history takes only merge requests rebased
   * on the target (GitLab answers 406 otherwise), so each head must descend from the one before it:
   * the test branch is then the last head itself, the very commit (or tree) the merge lands. Stacked
   * merge requests can share a run only with fast-forward merges (and the merge_commit method).
   */
  async #linearTestBranch(
    repo: ForgeRepo,
    input: { baseSha: string; prHeads: readonly { number: number; sha: string }[] },
    method: 'ff' | 'rebase_merge',
  ): Promise<BuildOutcome> {
    const how = method === 'ff' ? 'fast-forward merges' : 'semi-linear history';
    let current = input.baseSha;
    for (const [i, pr] of input.prHeads.entries()) {
      // Semi-linear history puts a merge commit on the target, which no other head descends from.
      if (method === 'rebase_merge' && i > 0) {
        return {
          ok: false,
          conflictPr: pr.number,
          reason: `!${pr.number} would need a rebase once !${input.prHeads[i - 1]?.number} merges (the project allows only ${how}): rebase it on the target branch after that and submit it again`,
        };
      }
      if (!(await isAncestor(this.#git(repo), current, pr.sha))) {
        return {
          ok: false,
          conflictPr: pr.number,
          reason: `!${pr.number} is not rebased on ${current.slice(0, 12)} and the project allows only ${how}: rebase it on the target branch and submit it again`,
        };
      }
      current = pr.sha;
    }
    return { ok: true, sha: current };
  }

  /** Deletes the branch from the clone (GitLab's copy is deleted through the API). */
  async deleteMirrorBranch(repo: ForgeRepo, branch: string): Promise<void> {
    await this.#mirrors.deleteBranch(repo, branch).catch(() => {});
  }
}
