import type { BuildOutcome, ForgeRepo } from '../../app/ports.ts';
import { splitProjectPath } from '../../domain/gitlab-path.ts';
import {
  DEFAULT_IDENTITY,
  DEFAULT_TIMEOUT_MS,
  GitCommandError,
  type GitContext,
  runGit,
} from '../git/git.ts';
import { GitForge, isSha } from '../git/index.ts';
import { branchRef } from '../git/names.ts';
import { type GitLabClient, unless } from './client.ts';
import { CHECKING, type GlMergeRequest, isFork, readMergeRequest } from './merge-requests.ts';
import { allows, type GlProjectSettings, projectPath } from './project.ts';
import {
  autoMergeMark,
  forgetTested,
  keepTested,
  markAutoMerge,
  predictedMergeCommit,
  replay,
  testedOf,
  treeOf,
} from './rebase.ts';

/** Why Mainline does not push to a fork merge request's branch. */
const FORK_CLOSED =
  'comes from a fork whose branch Mainline cannot push to ("Allow commits from members who can merge to the target branch" is off): rebase it on the target branch and submit it again, or allow those commits';

/** How often, and how far apart, a merge request is read until GitLab took a pushed head. */
const HEAD_WAIT_ATTEMPTS = 30;
const HEAD_WAIT_MS = 500;

export interface TestBranchOptions {
  /** Folder of the forge's own clones (bare), one per repository. */
  mirrorRoot: string;
  /** The git remote of a repository (never taken from API answers). */
  remoteUrl: (repo: ForgeRepo) => string;
  gitTimeoutMs?: number;
  /**
   * Push with `ci.skip` and create the test branch's pipeline through the API: for every project
   * (true) or for the projects whose full paths are listed (lower-case).
   */
  createPipelines?: boolean | readonly string[];
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
  readonly #createPipelines: boolean | ReadonlySet<string>;

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
    const create = options.createPipelines ?? false;
    this.#createPipelines = typeof create === 'boolean' ? create : new Set(create);
  }

  /** Whether the repository's test branches get their pipelines through the API. */
  #createsPipelines(repo: ForgeRepo): boolean {
    const create = this.#createPipelines;
    return typeof create === 'boolean' ? create : create.has(`${repo.owner}/${repo.name}`.toLowerCase());
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
    const settings = await this.#settings(repo);
    const built =
      (settings.merge_method ?? 'merge') === 'merge'
        ? await this.#mirrors.buildTestBranch(repo, {
            testBranch: input.testBranch,
            baseSha: input.baseSha,
            prHeads: [...input.prHeads],
            message: 'Merge merge request',
          })
        : await this.#linearTestBranch(repo, input, settings);
    if (!built.ok) return built;
    const createPipeline = this.#createsPipelines(repo);
    await this.#remoteGit(repo, [
      'push',
      '--quiet',
      '--force',
      // The pipeline is created through the API below instead, so it runs once.
      ...(createPipeline ? ['-o', 'ci.skip'] : []),
      this.#remoteUrl(repo),
      `${built.sha}:refs/heads/${input.testBranch}`,
    ]);
    if (createPipeline) {
      await this.#client.request(
        'POST',
        `${projectPath(repo)}/pipeline?ref=${encodeURIComponent(input.testBranch)}`,
      );
    }
    return built;
  }

  /**
   * A project that merges fast-forward or with semi-linear history takes only merge requests rebased
   * on the target (GitLab answers 406 otherwise), so the queue rebases what it tests: each merge
   * request's commits are replayed (rebase.ts) on the base with the ones ahead of it, themselves
   * rebased (and, with semi-linear history, each followed by the merge commit GitLab will add). The
   * test branch is the last rebased head: with fast-forward exactly the commit the merge lands, with
   * semi-linear history the tree it lands. Each rebased head is kept, for the merge to check that what
   * it pushes to the merge request was tested (merge.ts).
   */
  async #linearTestBranch(
    repo: ForgeRepo,
    input: { baseSha: string; prHeads: readonly { number: number; sha: string }[] },
    settings: GlProjectSettings,
  ): Promise<BuildOutcome> {
    const method = settings.merge_method === 'ff' ? 'ff' : 'rebase_merge';
    const git = this.#git(repo);
    let current = input.baseSha;
    for (const [i, pr] of input.prHeads.entries()) {
      const rebased = await replay(git, current, pr.sha);
      if (!rebased.ok) {
        return {
          ok: false,
          conflictPr: pr.number,
          reason: `!${pr.number} does not rebase on ${current.slice(0, 12)}: ${rebased.reason}`,
        };
      }
      // Semi-linear history: a merge request behind another is rebased again on GitLab's merge commit.
      const rewritten = rebased.sha !== pr.sha || (method === 'rebase_merge' && i > 0);
      if (rewritten) {
        const refused = await this.#cannotRewrite(repo, pr.number, settings);
        if (refused !== null) return { ok: false, conflictPr: pr.number, reason: refused };
      }
      await keepTested(git, pr.number, rebased.sha);
      if (i === input.prHeads.length - 1) return { ok: true, sha: rebased.sha };
      current =
        method === 'ff' ? rebased.sha : await predictedMergeCommit(git, current, rebased.sha, pr.number);
    }
    return { ok: true, sha: current };
  }

  /**
   * Why the queue cannot put rebased commits on merge request iid (null: it can): the branch of a
   * fork's merge request is Mainline's to push to only when the merge request allows commits from
   * members who can merge (`allow_collaboration`). (With "Pipelines must succeed" the rebased head
   * gets its own pipeline and GitLab merges it when that succeeds: merge.ts.)
   */
  async #cannotRewrite(repo: ForgeRepo, iid: number, settings: GlProjectSettings): Promise<string | null> {
    const mr = await readMergeRequest(this.#client, repo, iid);
    if (mr === null) return `merge request !${iid} not found`;
    if (isFork(mr) && mr.allow_collaboration !== true) {
      return `!${iid} needs a rebase (the project allows only ${allows(settings)}) and ${FORK_CLOSED}`;
    }
    return null;
  }

  /**
   * The fork a merge request comes from, as a repository whose git remote Mainline pushes to (built
   * like the project's from the instance's URL and the fork's path, never a URL from the API); null
   * when GitLab does not show it.
   */
  async #forkOf(repo: ForgeRepo, mr: GlMergeRequest): Promise<ForgeRepo | null> {
    if (mr.source_project_id === undefined) return null;
    const res = await unless([403, 404], null, () =>
      this.#client.request<{ path_with_namespace?: string }>('GET', `/projects/${mr.source_project_id}`),
    );
    const parts = splitProjectPath(res?.data.path_with_namespace ?? '');
    return parts === null ? null : { id: repo.id, host: repo.host, ...parts };
  }

  /**
   * What a fast-forward or semi-linear merge of merge request iid needs as its head: the head the
   * queue saw replayed on the target tip (the head itself when it is on it already). A rebased head
   * must be one the queue tested (with semi-linear history, of the tested tree: GitLab's merge
   * commits ahead of it are not Mainline's), and is pushed to the merge request's source branch only
   * with a lease on the head the queue saw, so a push made meanwhile is never overwritten. ciSkip:
   * pushed with the `ci.skip` push option (its pipeline ran on the test branch); without it GitLab runs
   * the head's own pipeline on the source branch ("Pipelines must succeed").
   */
  async linearMergeHead(
    repo: ForgeRepo,
    input: { iid: number; headSha: string; onto: string; method: 'ff' | 'rebase_merge'; ciSkip: boolean },
  ): Promise<{ ok: true; sha: string } | { ok: false; reason: string }> {
    const { iid, headSha } = input;
    if (!isSha(headSha) || !isSha(input.onto)) return { ok: false, reason: `not a commit SHA: ${headSha}` };
    await this.#fetch(repo, [input.onto, headSha], [iid]);
    const git = this.#git(repo);
    const rebased = await replay(git, input.onto, headSha);
    if (!rebased.ok) {
      return {
        ok: false,
        reason: `!${iid} does not rebase on ${input.onto.slice(0, 12)}: ${rebased.reason}; not merged`,
      };
    }
    if (rebased.sha === headSha) return { ok: true, sha: headSha };
    const kept = await testedOf(git, iid);
    const tree = await treeOf(git, rebased.sha);
    const tested =
      input.method === 'ff' ? kept.some((k) => k.sha === rebased.sha) : kept.some((k) => k.tree === tree);
    if (!tested) {
      return {
        ok: false,
        reason: `!${iid} rebased on ${input.onto.slice(0, 12)} is ${rebased.sha}, which the queue did not test; not merged`,
      };
    }
    const mr = await readMergeRequest(this.#client, repo, iid);
    if (mr === null) return { ok: false, reason: `merge request !${iid} not found` };
    // Pushed already (a repeated merge whose answer was lost).
    if (mr.sha === rebased.sha) return { ok: true, sha: rebased.sha };
    if (mr.sha !== headSha) {
      return { ok: false, reason: `the head of !${iid} is no longer ${headSha} (now ${mr.sha}); not merged` };
    }
    const source = await this.#sourceBranch(repo, mr);
    if ('reason' in source) return { ok: false, reason: source.reason };
    const { remote, ref } = source;
    const refused = await this.#pushWithLease(repo, remote, ref, headSha, rebased.sha, input.ciSkip);
    if (refused === 'stale') {
      return {
        ok: false,
        reason: `the source branch ${mr.source_branch} of !${iid} moved from ${headSha} while it was queued; not merged`,
      };
    }
    if (refused !== null) {
      return {
        ok: false,
        reason: `GitLab refused the push of the rebased head to ${mr.source_branch} of !${iid} (${refused}); not merged`,
      };
    }
    // GitLab updates a merge request's head after a push in the background, then its mergeability.
    let taken = false;
    for (let attempt = 0; attempt < HEAD_WAIT_ATTEMPTS; attempt++) {
      const now = await readMergeRequest(this.#client, repo, iid);
      if (now !== null && now.sha !== rebased.sha && now.sha !== headSha) {
        return { ok: false, reason: `the head of !${iid} moved to ${now.sha} after the rebase; not merged` };
      }
      taken = now?.sha === rebased.sha;
      if (taken && !CHECKING.has(now?.detailed_merge_status ?? '')) break;
      await new Promise((resolve) => setTimeout(resolve, HEAD_WAIT_MS));
    }
    // Still being checked: the merge call asks GitLab to decide (it answers 405 or 406 when it cannot).
    if (taken) return { ok: true, sha: rebased.sha };
    return {
      ok: false,
      reason: `GitLab did not take ${rebased.sha} as the head of !${iid} in time; not merged`,
    };
  }

  /**
   * Where a merge request's source branch is pushed to: its git remote and full ref. A fork's branch
   * lives in the fork's repository, which Mainline may push to only when the merge request allows
   * commits from members who can merge.
   */
  async #sourceBranch(
    repo: ForgeRepo,
    mr: GlMergeRequest,
  ): Promise<{ remote: string; ref: string } | { reason: string }> {
    const iid = mr.iid;
    let remote = this.#remoteUrl(repo);
    if (isFork(mr)) {
      if (mr.allow_collaboration !== true) return { reason: `!${iid} needs a rebase and ${FORK_CLOSED}` };
      const fork = await this.#forkOf(repo, mr);
      if (fork === null) {
        return { reason: `the fork project ${mr.source_project_id} of !${iid} cannot be read; not merged` };
      }
      remote = this.#remoteUrl(fork);
    }
    const ref = await branchRef(this.#git(repo), mr.source_branch).catch(() => null);
    if (ref === null)
      return { reason: `!${iid} has a source branch Mainline will not push to: ${mr.source_branch}` };
    return { remote, ref };
  }

  /**
   * A merge that will not happen after all (the target moved while GitLab waited for the pipeline):
   * the head the queue saw goes back on the merge request's branch, only where the branch still holds
   * a rebased head the queue pushed (lease on it), so the queue can test it again on the new target.
   */
  async restoreQueuedHead(repo: ForgeRepo, mr: GlMergeRequest, headSha: string): Promise<void> {
    if (mr.state !== 'opened' || mr.sha === headSha || !isSha(headSha)) return;
    if (!(await testedOf(this.#git(repo), mr.iid)).some((k) => k.sha === mr.sha)) return;
    const source = await this.#sourceBranch(repo, mr);
    if ('reason' in source) return;
    await this.#pushWithLease(repo, source.remote, source.ref, mr.sha, headSha, false);
  }

  /** The head of iid replayed on onto, as linearMergeHead would push it (null: it does not rebase). */
  async rebasedHead(repo: ForgeRepo, headSha: string, onto: string, iid: number): Promise<string | null> {
    if (!isSha(headSha) || !isSha(onto)) return null;
    await this.#fetch(repo, [onto, headSha], [iid]);
    const rebased = await replay(this.#git(repo), onto, headSha);
    return rebased.ok ? rebased.sha : null;
  }

  /** Keeps that Mainline set GitLab's auto-merge of merge request iid at sha. */
  async markAutoMerge(repo: ForgeRepo, iid: number, sha: string): Promise<void> {
    await markAutoMerge(this.#git(repo), iid, sha);
  }

  /** Whether Mainline set GitLab's auto-merge of merge request iid at sha. */
  async autoMergeAsked(repo: ForgeRepo, iid: number, sha: string): Promise<boolean> {
    return (await autoMergeMark(this.#git(repo), iid)) === sha;
  }

  /** Forgets what was tested of a merged merge request. */
  async forgetTested(repo: ForgeRepo, iid: number): Promise<void> {
    await forgetTested(this.#git(repo), iid).catch(() => {});
  }

  /**
   * Pushes sha from repo's clone to the branch (its full ref) of `remote` (the project's, or a fork's)
   * only if it is still at `lease` (git's force-with-lease: the server updates the ref only from that
   * commit). Answers null when pushed, 'stale' when the branch was elsewhere, else what git said.
   * ciSkip: the commit's pipeline ran on its test branch.
   */
  async #pushWithLease(
    repo: ForgeRepo,
    remote: string,
    ref: string,
    lease: string,
    sha: string,
    ciSkip: boolean,
  ): Promise<string | null> {
    try {
      await this.#remoteGit(repo, [
        'push',
        '--quiet',
        ...(ciSkip ? ['-o', 'ci.skip'] : []),
        `--force-with-lease=${ref}:${lease}`,
        remote,
        `${sha}:${ref}`,
      ]);
      return null;
    } catch (error) {
      if (!(error instanceof GitCommandError) || error.code !== 1) throw error;
      // A ref that moved between git's read and its update is refused by the server's own check.
      if (/stale info|failed to update ref|failed to lock|fetch first|non-fast-forward/.test(error.message))
        return 'stale';
      return error.message.replace(/\s+/g, ' ').slice(0, 300);
    }
  }

  /** Deletes the branch from the clone (GitLab's copy is deleted through the API). */
  async deleteMirrorBranch(repo: ForgeRepo, branch: string): Promise<void> {
    await this.#mirrors.deleteBranch(repo, branch).catch(() => {});
  }
}
