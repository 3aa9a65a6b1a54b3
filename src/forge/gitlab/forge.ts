import type {
  BuildOutcome,
  CommitStatusReading,
  Forge,
  ForgePullRequest,
  ForgeRepo,
  GitLabEventForge,
  MergeInput,
  MergeOutcome,
  PrStateReport,
} from '../../app/ports.ts';
import { GitLabClient, type GitLabClientOptions, unless } from './client.ts';
import { accessRole, collaboratorPermission } from './members.ts';
import { mergeMergeRequest } from './merge.ts';
import { approvalsLeft, type GlMergeRequest, readMergeRequest, readPullRequest } from './merge-requests.ts';
import { type GlProjectSettings, projectPath } from './project.ts';
import { reportPrState } from './report.ts';
import { commitStatuses, requiredStatuses } from './statuses.ts';
import { GitLabTestBranches } from './test-branches.ts';

type RequiredStatuses = Awaited<ReturnType<Forge['requiredStatuses']>>;

/** How long the project's settings read from GitLab are reused. */
const SETTINGS_TTL_MS = 30_000;

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
  /**
   * Test branches are pushed with `ci.skip` and their pipeline is created through the API
   * (MAINLINE_GITLAB_CREATE_PIPELINES), for projects whose pipelines do not run on push.
   */
  createPipelines?: boolean | readonly string[];
}

/**
 * The merge queue's forge on GitLab (gitlab.com or self-managed) through REST API v4. Merge requests
 * are the queue's PRs (by iid); test branches are built with real git in a bare clone Mainline keeps
 * per repository and pushed (test-branches.ts); merges go through the merge API with the tested
 * head's SHA (merge.ts).
 */
export class GitLabForge implements Forge, GitLabEventForge {
  readonly client: GitLabClient;
  readonly #testBranches: GitLabTestBranches;
  readonly #pollIntervalMs: number;
  readonly #settings = new Map<string, { at: number; value: GlProjectSettings }>();

  constructor(options: GitLabForgeOptions) {
    this.client = options.client instanceof GitLabClient ? options.client : new GitLabClient(options.client);
    this.#testBranches = new GitLabTestBranches(this.client, (repo) => this.projectSettings(repo), {
      mirrorRoot: options.mirrorRoot,
      remoteUrl:
        options.remoteUrl ??
        ((repo) =>
          `${this.client.baseUrl}/${repo.owner.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(repo.name)}.git`),
      gitTimeoutMs: options.gitTimeoutMs,
      createPipelines: options.createPipelines,
    });
    this.#pollIntervalMs = options.pollIntervalMs ?? 120_000;
  }

  /** The project's merge method and pipeline settings, reused for a short while. */
  async projectSettings(repo: ForgeRepo): Promise<GlProjectSettings> {
    const key = `${repo.owner}/${repo.name}`.toLowerCase();
    const kept = this.#settings.get(key);
    if (kept !== undefined && Date.now() - kept.at < SETTINGS_TTL_MS) return kept.value;
    const res = await this.client.request<GlProjectSettings>('GET', projectPath(repo));
    const value = {
      merge_method: res.data.merge_method ?? 'merge',
      only_allow_merge_if_pipeline_succeeds: res.data.only_allow_merge_if_pipeline_succeeds === true,
      allow_merge_on_skipped_pipeline: res.data.allow_merge_on_skipped_pipeline === true,
    };
    this.#settings.set(key, { at: Date.now(), value });
    return value;
  }

  /** Approvals still missing on a merge request (0 when none are required or the API has none). */
  approvalsLeft(repo: ForgeRepo, iid: number): Promise<number> {
    return approvalsLeft(this.client, repo, iid);
  }

  pollIntervalMs(): number {
    return this.#pollIntervalMs;
  }

  async head(repo: ForgeRepo, branch: string): Promise<string | null> {
    const path = `${projectPath(repo)}/repository/branches/${encodeURIComponent(branch)}`;
    const res = await unless([404], null, () => this.client.request<{ commit: { id: string } }>('GET', path));
    return res === null ? null : res.data.commit.id;
  }

  mergeRequest(repo: ForgeRepo, iid: number): Promise<GlMergeRequest | null> {
    return readMergeRequest(this.client, repo, iid);
  }

  pullRequest(repo: ForgeRepo, number: number): Promise<ForgePullRequest | null> {
    return readPullRequest(this.client, repo, number);
  }

  buildTestBranch(
    repo: ForgeRepo,
    input: { testBranch: string; baseSha: string; prHeads: readonly { number: number; sha: string }[] },
  ): Promise<BuildOutcome> {
    return this.#testBranches.buildTestBranch(repo, input);
  }

  mergePullRequest(repo: ForgeRepo, input: MergeInput): Promise<MergeOutcome> {
    return mergeMergeRequest(this, repo, input);
  }

  /** The head a fast-forward or semi-linear merge lands, rebased and pushed when needed (test-branches.ts). */
  linearMergeHead(
    repo: ForgeRepo,
    input: { iid: number; headSha: string; onto: string; method: 'ff' | 'rebase_merge'; ciSkip: boolean },
  ): Promise<{ ok: true; sha: string } | { ok: false; reason: string }> {
    return this.#testBranches.linearMergeHead(repo, input);
  }

  /** Puts the queued head back where the branch holds a rebased head Mainline pushed (test-branches.ts). */
  restoreQueuedHead(repo: ForgeRepo, mr: GlMergeRequest, headSha: string): Promise<void> {
    return this.#testBranches.restoreQueuedHead(repo, mr, headSha);
  }

  /** Keeps that Mainline set GitLab's auto-merge of merge request iid at sha. */
  markAutoMerge(repo: ForgeRepo, iid: number, sha: string): Promise<void> {
    return this.#testBranches.markAutoMerge(repo, iid, sha);
  }

  /** Whether Mainline set GitLab's auto-merge of merge request iid at sha. */
  autoMergeAsked(repo: ForgeRepo, iid: number, sha: string): Promise<boolean> {
    return this.#testBranches.autoMergeAsked(repo, iid, sha);
  }

  /** A head replayed on a commit as linearMergeHead pushes it (null: it does not rebase). */
  rebasedHead(repo: ForgeRepo, headSha: string, onto: string, iid: number): Promise<string | null> {
    return this.#testBranches.rebasedHead(repo, headSha, onto, iid);
  }

  /** Forgets the rebased heads tested for a merged merge request. */
  forgetTested(repo: ForgeRepo, iid: number): Promise<void> {
    return this.#testBranches.forgetTested(repo, iid);
  }

  async deleteBranch(repo: ForgeRepo, branch: string): Promise<void> {
    const path = `${projectPath(repo)}/repository/branches/${encodeURIComponent(branch)}`;
    await unless([404], null, () => this.client.request('DELETE', path));
    await this.#testBranches.deleteMirrorBranch(repo, branch);
  }

  requiredStatuses(repo: ForgeRepo, branch: string): Promise<RequiredStatuses> {
    return requiredStatuses(this, repo, branch);
  }

  reportPrState(repo: ForgeRepo, input: PrStateReport): Promise<void> {
    return reportPrState(this, repo, input);
  }

  collaboratorPermission(repo: ForgeRepo, login: string): Promise<string> {
    return collaboratorPermission(this.client, repo, login);
  }

  accessRole(repo: ForgeRepo, userId: number): Promise<string> {
    return accessRole(this.client, repo, userId);
  }

  commitStatuses(repo: ForgeRepo, sha: string): Promise<CommitStatusReading[]> {
    return commitStatuses(this, repo, sha);
  }
}
