import type {
  BuildOutcome,
  Forge,
  ForgePullRequest,
  ForgeRepo,
  MergeInput,
  MergeOutcome,
  PrStateReport,
} from '../../app/ports.ts';
import type { Mergeability, PrState } from '../../domain/queue/index.ts';
import { DEFAULT_IDENTITY, DEFAULT_TIMEOUT_MS, type GitContext, runGit } from '../git/git.ts';
import { GitForge, isSha, parseMainlineConfig } from '../git/index.ts';
import { GitLabClient, type GitLabClientOptions, projectId, statusOf, unless } from './client.ts';

type RequiredStatuses = Awaited<ReturnType<Forge['requiredStatuses']>>;

/** The commit status name Mainline sets on a queued merge request's head. */
export const GITLAB_STATUS_NAME = 'mainline/merge-queue';
/** Hidden first line of Mainline's one note per merge request, by which it is found and edited. */
export const NOTE_MARKER = '<!-- mainline:queue-status -->';

/** The parts of a GitLab merge request Mainline reads. */
export interface GlMergeRequest {
  iid: number;
  title: string;
  state: 'opened' | 'closed' | 'locked' | 'merged';
  source_branch: string;
  target_branch: string;
  sha: string;
  draft?: boolean;
  work_in_progress?: boolean;
  detailed_merge_status?: string;
  merge_status?: string;
  author?: { username?: string } | null;
  diff_refs?: { base_sha?: string | null; head_sha?: string | null } | null;
  merge_commit_sha?: string | null;
  squash_commit_sha?: string | null;
}

export interface GitLabForgeOptions {
  client: GitLabClient | GitLabClientOptions;
  /** Folder of the forge's own clones (bare), one per repository. */
  mirrorRoot: string;
  /**
   * The git remote of a repository; default `<baseUrl>/<owner>/<name>.git` over HTTPS with the token.
   * Never taken from API answers.
   */
  remoteUrl?: (repo: ForgeRepo) => string;
  /** How often the runner compares a queue with GitLab (default 2 minutes: webhooks bring changes). */
  pollIntervalMs?: number;
  gitTimeoutMs?: number;
}

/** detailed_merge_status values that say GitLab is still working it out. */
const CHECKING = new Set(['unchecked', 'checking', 'preparing', 'approvals_syncing']);
/**
 * Values that only say the head's own pipeline has not passed yet: the queue waits for the required
 * statuses on the head itself, so these do not make the merge request unmergeable for it.
 */
const CI_WAIT = new Set(['ci_must_pass', 'ci_still_running', 'mergeable']);

const STATUS_STATES: Record<PrState, 'pending' | 'running' | 'success' | 'failed' | 'canceled'> = {
  not_ready: 'pending',
  pending: 'pending',
  testing: 'running',
  tests_passed: 'running',
  pending_failure: 'running',
  merged: 'success',
  failed: 'failed',
  cancelled: 'canceled',
};

const LABELS: Record<PrState, string> = {
  not_ready: 'Waiting to be ready',
  pending: 'Queued',
  testing: 'Testing',
  tests_passed: 'Tests passed, merging',
  merged: 'Merged',
  failed: 'Failed',
  cancelled: 'Removed from the queue',
  pending_failure: 'Tests failed, waiting on the merge requests ahead',
};

/** GitLab access levels as the role names the queue's command check understands (GitHub's). */
export function roleOfAccessLevel(level: number): string {
  if (level >= 50) return 'admin';
  if (level >= 40) return 'maintain';
  if (level >= 30) return 'write';
  if (level >= 20) return 'triage';
  if (level > 0) return 'read';
  return 'none';
}

/**
 * The merge queue's forge on GitLab (gitlab.com or self-managed) through REST API v4. Merge requests
 * are the queue's PRs (by iid); test branches are built with real git in a bare clone Mainline keeps
 * per repository and pushed; merges go through the merge API with the tested head's SHA.
 */
export class GitLabForge implements Forge {
  readonly client: GitLabClient;
  readonly #mirrors: GitForge;
  readonly #remoteUrl: (repo: ForgeRepo) => string;
  readonly #pollIntervalMs: number;
  readonly #gitTimeoutMs: number;

  constructor(options: GitLabForgeOptions) {
    this.client = options.client instanceof GitLabClient ? options.client : new GitLabClient(options.client);
    this.#mirrors = new GitForge({ root: options.mirrorRoot, timeoutMs: options.gitTimeoutMs });
    this.#remoteUrl =
      options.remoteUrl ??
      ((repo) =>
        `${this.client.baseUrl}/${repo.owner.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(repo.name)}.git`);
    this.#pollIntervalMs = options.pollIntervalMs ?? 120_000;
    this.#gitTimeoutMs = options.gitTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  pollIntervalMs(): number {
    return this.#pollIntervalMs;
  }

  #project(repo: ForgeRepo): string {
    return `/projects/${projectId(repo.owner, repo.name)}`;
  }

  async head(repo: ForgeRepo, branch: string): Promise<string | null> {
    const path = `${this.#project(repo)}/repository/branches/${encodeURIComponent(branch)}`;
    const res = await unless([404], null, () => this.client.request<{ commit: { id: string } }>('GET', path));
    return res === null ? null : res.data.commit.id;
  }

  async mergeRequest(repo: ForgeRepo, iid: number): Promise<GlMergeRequest | null> {
    const path = `${this.#project(repo)}/merge_requests/${iid}`;
    const res = await unless([404], null, () => this.client.request<GlMergeRequest>('GET', path));
    return res === null ? null : res.data;
  }

  async pullRequest(repo: ForgeRepo, number: number): Promise<ForgePullRequest | null> {
    const mr = await this.mergeRequest(repo, number);
    if (mr === null) return null;
    return {
      number: mr.iid,
      title: mr.title,
      author: mr.author?.username ?? '',
      headSha: mr.sha,
      headBranch: mr.source_branch,
      baseBranch: mr.target_branch,
      baseSha: mr.diff_refs?.base_sha ?? mr.sha,
      mergeability: mergeability(mr),
      state: mr.state === 'merged' ? 'merged' : mr.state === 'opened' ? 'open' : 'closed',
    };
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
        GIT_CONFIG_KEY_0: `http.${this.client.baseUrl}/.extraHeader`,
        GIT_CONFIG_VALUE_0: this.client.gitAuthHeader(),
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
    const built = await this.#mirrors.buildTestBranch(repo, {
      testBranch: input.testBranch,
      baseSha: input.baseSha,
      prHeads: [...input.prHeads],
      message: 'Merge merge request',
    });
    if (!built.ok) return built;
    await this.#remoteGit(repo, [
      'push',
      '--quiet',
      '--force',
      this.#remoteUrl(repo),
      `${built.sha}:refs/heads/${input.testBranch}`,
    ]);
    return built;
  }

  /**
   * Merges through the merge API with `sha` = the tested head, so GitLab refuses (409) a head that
   * moved. With expectedTargetSha, the target is read first and a target elsewhere is refused
   * (targetMovedTo), as the API cannot make the merge conditional on it.
   */
  async mergePullRequest(repo: ForgeRepo, input: MergeInput): Promise<MergeOutcome> {
    if (input.expectedTargetSha !== undefined) {
      const tip = await this.head(repo, input.targetBranch);
      if (tip !== input.expectedTargetSha) {
        const done = await this.#mergedAlready(repo, input);
        if (done !== null) return done;
        if (tip === null) return { ok: false, reason: `target branch ${input.targetBranch} does not exist` };
        return {
          ok: false,
          reason: `${input.targetBranch} moved to ${tip} (!${input.prNumber} was tested on ${input.expectedTargetSha}); not merged`,
          targetMovedTo: tip,
        };
      }
    }
    const title = input.prTitle.replace(/\s+/g, ' ').trim();
    const path = `${this.#project(repo)}/merge_requests/${input.prNumber}/merge`;
    const squash = input.method === 'squash';
    try {
      const res = await this.client.request<GlMergeRequest>(
        'PUT',
        path,
        {
          sha: input.headSha,
          squash,
          ...(squash ? { squash_commit_message: `${title} (!${input.prNumber})` } : {}),
          ...(input.method === 'merge_commit'
            ? { merge_commit_message: `Merge merge request !${input.prNumber}: ${title}` }
            : {}),
        },
        { retry: false },
      );
      const mr = res.data;
      const sha = mr.merge_commit_sha ?? mr.squash_commit_sha ?? null;
      return { ok: true, newTargetSha: sha ?? (await this.#requireHead(repo, input.targetBranch)) };
    } catch (error) {
      const status = statusOf(error);
      const done = await this.#mergedAlready(repo, input);
      if (done !== null) return done;
      if (status === 404) return { ok: false, reason: `merge request !${input.prNumber} not found` };
      if (status === 409) {
        return {
          ok: false,
          reason: `the head of !${input.prNumber} is no longer ${input.headSha} (GitLab: ${(error as Error).message}); not merged`,
        };
      }
      if (status === 405 || status === 406 || status === 422 || status === 403) {
        return {
          ok: false,
          reason: `GitLab refused to merge !${input.prNumber}: ${(error as Error).message}`,
        };
      }
      throw error;
    }
  }

  async #requireHead(repo: ForgeRepo, branch: string): Promise<string> {
    const sha = await this.head(repo, branch);
    if (sha === null) throw new Error(`branch ${branch} does not exist`);
    return sha;
  }

  /** The outcome of a merge that already happened (a lost answer), or null when it is not merged. */
  async #mergedAlready(repo: ForgeRepo, input: MergeInput): Promise<MergeOutcome | null> {
    const mr = await this.mergeRequest(repo, input.prNumber);
    if (mr === null || mr.state !== 'merged') return null;
    if (mr.sha !== input.headSha) {
      return { ok: false, reason: `!${input.prNumber} was merged at ${mr.sha}, not at ${input.headSha}` };
    }
    const sha = mr.merge_commit_sha ?? mr.squash_commit_sha ?? null;
    return { ok: true, newTargetSha: sha ?? (await this.#requireHead(repo, input.targetBranch)) };
  }

  async deleteBranch(repo: ForgeRepo, branch: string): Promise<void> {
    const path = `${this.#project(repo)}/repository/branches/${encodeURIComponent(branch)}`;
    await unless([404], null, () => this.client.request('DELETE', path));
    await this.#mirrors.deleteBranch(repo, branch).catch(() => {});
  }

  /** `.mainline.yaml` on the branch (GitLab has no named required checks to read instead). */
  async requiredStatuses(repo: ForgeRepo, branch: string): Promise<RequiredStatuses> {
    const none: RequiredStatuses = { serviceConfig: null, branchProtection: null, flakeProtection: null };
    const path = `${this.#project(repo)}/repository/files/${encodeURIComponent('.mainline.yaml')}/raw?ref=${encodeURIComponent(branch)}`;
    const res = await unless([404], null, () =>
      this.client.request<string>('GET', path, undefined, { raw: true }),
    );
    if (res === null) return none;
    const parsed = parseMainlineConfig(res.data);
    if (!parsed.ok) {
      this.client.log.warn(
        { repo: `${repo.owner}/${repo.name}`, reason: parsed.reason },
        'unreadable .mainline.yaml',
      );
      return none;
    }
    return {
      serviceConfig: parsed.serviceConfig,
      branchProtection: null,
      flakeProtection: parsed.flakeProtection,
    };
  }

  /**
   * A commit status on the head (statusCheck) and one upserted note (comments). Telling the author
   * never holds up the queue: a merge request or commit GitLab refuses (400, 403, 404) is skipped.
   */
  async reportPrState(repo: ForgeRepo, input: PrStateReport): Promise<void> {
    const skip = (what: string) => (error: unknown) => {
      const status = statusOf(error);
      if (status !== 400 && status !== 403 && status !== 404) throw error;
      this.client.log.warn(
        { repo: `${repo.owner}/${repo.name}`, mr: input.prNumber },
        `${what} skipped: ${(error as Error).message}`,
      );
    };
    if (input.statusCheck ?? true) {
      await this.client
        .request('POST', `${this.#project(repo)}/statuses/${input.headSha}`, {
          state: STATUS_STATES[input.state],
          name: GITLAB_STATUS_NAME,
          description: `${LABELS[input.state]}: ${input.reason}`.slice(0, 140),
          ...(input.targetUrl === undefined ? {} : { target_url: input.targetUrl }),
        })
        .catch(skip('status'));
    }
    if (input.comments ?? true) {
      const body = [
        NOTE_MARKER,
        `**Merge queue: ${LABELS[input.state]}**`,
        '',
        input.reason,
        ...(input.details === undefined ? [] : ['', input.details]),
      ].join('\n');
      const notes = `${this.#project(repo)}/merge_requests/${input.prNumber}/notes`;
      try {
        const all = await this.client.list<{ id: number; body: string }>(
          `${notes}?sort=asc&order_by=created_at`,
        );
        const mine = all.find((n) => n.body.startsWith(NOTE_MARKER));
        if (mine === undefined) await this.client.request('POST', notes, { body });
        else if (mine.body !== body) await this.client.request('PUT', `${notes}/${mine.id}`, { body });
      } catch (error) {
        skip('note')(error);
      }
    }
  }

  /**
   * The user's role on the project from their effective membership (inherited included), as a
   * GitHub-style role name: Developer (30) is "write", the least that may drive the queue.
   */
  async collaboratorPermission(repo: ForgeRepo, login: string): Promise<string> {
    const users = await this.client.request<{ id: number; username: string }[]>(
      'GET',
      `/users?username=${encodeURIComponent(login)}`,
    );
    const user = users.data.find((u) => u.username.toLowerCase() === login.toLowerCase());
    if (user === undefined) return 'none';
    return this.accessRole(repo, user.id);
  }

  /** The role of a user by id (what GitLab's webhooks name): see collaboratorPermission. */
  async accessRole(repo: ForgeRepo, userId: number): Promise<string> {
    const res = await unless([404], null, () =>
      this.client.request<{ access_level: number; state?: string }>(
        'GET',
        `${this.#project(repo)}/members/all/${userId}`,
      ),
    );
    if (res === null || (res.data.state !== undefined && res.data.state !== 'active')) return 'none';
    return roleOfAccessLevel(res.data.access_level);
  }

  /**
   * The latest status of every job and external status on a commit, by name, as commit-status states.
   * Jobs allowed to fail count as passed when they fail.
   */
  async commitStatuses(
    repo: ForgeRepo,
    sha: string,
  ): Promise<{ name: string; state: 'pending' | 'success' | 'failure' | 'error'; url: string | null }[]> {
    const rows = await this.client.list<{
      name: string;
      status: string;
      allow_failure?: boolean;
      target_url?: string | null;
    }>(`${this.#project(repo)}/repository/commits/${sha}/statuses`);
    const out = new Map<
      string,
      { name: string; state: ReturnType<typeof statusState>; url: string | null }
    >();
    for (const row of rows) {
      if (row.name === GITLAB_STATUS_NAME || out.has(row.name)) continue;
      out.set(row.name, {
        name: row.name,
        state: statusState(row.status, row.allow_failure === true),
        url: row.target_url ?? null,
      });
    }
    return [...out.values()];
  }
}

/** A GitLab job or commit status as a commit-status state. */
export function statusState(
  status: string,
  allowFailure = false,
): 'pending' | 'success' | 'failure' | 'error' {
  switch (status) {
    case 'success':
    case 'skipped':
      return 'success';
    case 'failed':
      return allowFailure ? 'success' : 'failure';
    case 'canceled':
    case 'canceling':
      return 'error';
    default:
      return 'pending';
  }
}

function mergeability(mr: GlMergeRequest): Mergeability {
  if (mr.draft === true || mr.work_in_progress === true || mr.state !== 'opened') return 'not_mergeable';
  const detailed = mr.detailed_merge_status;
  if (detailed !== undefined) {
    if (CI_WAIT.has(detailed)) return 'mergeable';
    return CHECKING.has(detailed) ? 'in_progress' : 'not_mergeable';
  }
  if (mr.merge_status === 'can_be_merged') return 'mergeable';
  return mr.merge_status === 'cannot_be_merged' ? 'not_mergeable' : 'in_progress';
}
