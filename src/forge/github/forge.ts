import type {
  BuildOutcome,
  Forge,
  ForgePullRequest,
  ForgeRepo,
  MergeInput,
  MergeOutcome,
} from '../../app/ports.ts';
import type { WorkflowRun } from '../../domain/fork-run.ts';
import type { Mergeability, MergeMethod } from '../../domain/queue/index.ts';
import { type GhPull, type GhWorkflowRun, isTransient, messageOf, pathOf, statusOf, unless } from './api.ts';
import {
  getPull,
  headOf,
  mergedAlready,
  params,
  placeBranch,
  requireHead,
  targetElsewhere,
} from './branches.ts';
import { GitHubClient, type GitHubClientOptions } from './client.ts';
import { removeLabel } from './labels.ts';
import { type ReportInput, reportPrState, type TalkBack } from './report.ts';
import { type RequiredStatuses, readRequiredStatuses } from './required.ts';

export interface GitHubForgeOptions {
  /** A shared client, or the options to build one. */
  client: GitHubClient | GitHubClientOptions;
  /** Comments and status checks when reportPrState's input does not say (default: both on, as new queues). */
  talkBack?: TalkBack;
  /** How often the queue runner compares a queue with GitHub (default 2 minutes: webhooks bring changes). */
  pollIntervalMs?: number;
}

const METHODS: Record<MergeMethod, 'merge' | 'squash' | 'rebase'> = {
  merge_commit: 'merge',
  squash: 'squash',
  rebase: 'rebase',
};

/**
 * The merge queue's forge on GitHub (or GitHub Enterprise Server) through its REST API: see
 * .scratch/github-rest-subset.md for the calls used. Every method is safe to repeat; the two calls
 * that are not idempotent (merging, creating the status comment) check for their effect before trying again.
 */
export class GitHubForge implements Forge {
  readonly client: GitHubClient;
  readonly #talkBack: TalkBack;
  readonly #pollIntervalMs: number;

  constructor(options: GitHubForgeOptions) {
    this.client = options.client instanceof GitHubClient ? options.client : new GitHubClient(options.client);
    this.#talkBack = options.talkBack ?? { comments: true, statusCheck: true };
    this.#pollIntervalMs = options.pollIntervalMs ?? 120_000;
  }

  pollIntervalMs(): number {
    return this.#pollIntervalMs;
  }

  async head(repo: ForgeRepo, branch: string): Promise<string | null> {
    const api = await this.client.forRepo(repo);
    return headOf(api, params(repo), branch);
  }

  async pullRequest(repo: ForgeRepo, number: number): Promise<ForgePullRequest | null> {
    const api = await this.client.forRepo(repo);
    const p = params(repo);
    const pr = await getPull(api, p, number);
    if (pr === null) return null;
    const compare = `GET /repos/{owner}/{repo}/compare/${pathOf(pr.base.ref)}...${pr.head.sha}`;
    const baseSha = await unless([404], pr.base.sha, async () => {
      const res = await api.request(compare, p);
      return (res.data as { merge_base_commit: { sha: string } }).merge_base_commit.sha;
    });
    return {
      number: pr.number,
      title: pr.title,
      author: pr.user?.login ?? '',
      headSha: pr.head.sha,
      headBranch: pr.head.ref,
      baseBranch: pr.base.ref,
      baseSha,
      mergeability: mergeability(pr),
      state: pr.merged ? 'merged' : pr.state === 'closed' ? 'closed' : 'open',
    };
  }

  async buildTestBranch(
    repo: ForgeRepo,
    input: { testBranch: string; baseSha: string; prHeads: readonly { number: number; sha: string }[] },
  ): Promise<BuildOutcome> {
    const api = await this.client.forRepo(repo);
    const p = params(repo);
    const placed = await placeBranch(api, p, input.testBranch, input.baseSha);
    if (placed !== null) return { ok: false, conflictPr: null, reason: placed };
    for (const pr of input.prHeads) {
      try {
        // 201: merged; 204: already contained. A repeat after a lost answer gets 204, so retries are safe.
        await api.request('POST /repos/{owner}/{repo}/merges', {
          ...p,
          base: input.testBranch,
          head: pr.sha,
          commit_message: `Merge pull request #${pr.number} into ${input.testBranch}\n\nPR #${pr.number} head ${pr.sha}`,
        });
      } catch (err) {
        const status = statusOf(err);
        const reason = `merging PR #${pr.number} (${pr.sha}): ${messageOf(err)}`;
        if (status === 409) return { ok: false, conflictPr: pr.number, reason };
        if (status === 404 || status === 422) return { ok: false, conflictPr: null, reason };
        throw err;
      }
    }
    const sha = await headOf(api, p, input.testBranch);
    if (sha === null) throw new Error(`test branch ${input.testBranch} disappeared while being built`);
    return { ok: true, sha };
  }

  /**
   * Merges the PR at input.headSha. With expectedTargetSha, first reads the base branch and refuses
   * (targetMovedTo) when it is elsewhere, since GitHub's merge API cannot make the merge conditional on
   * the base: a push in the one round trip between that read and the merge still lands under the PR
   * (docs/github.md: branch protection's "require branches to be up to date" closes it on GitHub's side,
   * though GitHub then refuses PRs whose branch is behind the base).
   * The read is repeated before every attempt, so a retry after "Base branch was modified" never merges
   * onto the push that caused it.
   */
  async mergePullRequest(repo: ForgeRepo, input: MergeInput): Promise<MergeOutcome> {
    const api = await this.client.forRepo(repo);
    const p = params(repo);
    const title = input.prTitle.replace(/\s+/g, ' ').trim();
    const commitTitle =
      input.method === 'merge_commit'
        ? `Merge pull request #${input.prNumber}: ${title}`
        : `${title} (#${input.prNumber})`;
    for (let attempt = 0; ; attempt++) {
      if (input.expectedTargetSha !== undefined) {
        const elsewhere = await targetElsewhere(api, p, input, input.expectedTargetSha);
        if (elsewhere !== null) return elsewhere;
      }
      let failure: unknown;
      try {
        const res = await api.request('PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
          ...p,
          pull_number: input.prNumber,
          merge_method: METHODS[input.method],
          sha: input.headSha,
          ...(input.method === 'rebase' ? {} : { commit_title: commitTitle }),
          // Never repeated blindly: the merge may have happened although the answer was lost.
          request: { retries: 0 },
        });
        const sha = typeof res.data.sha === 'string' && res.data.sha !== '' ? res.data.sha : null;
        return { ok: true, newTargetSha: sha ?? (await requireHead(api, p, input.targetBranch)) };
      } catch (err) {
        failure = err;
      }
      const done = await mergedAlready(api, p, input);
      if (done !== null) return done;
      const status = statusOf(failure);
      const message = messageOf(failure);
      // GitHub answers 405 "Base branch was modified" when a push races the merge: worth another try.
      const retryable = isTransient(failure) || (status === 405 && /base branch was modified/i.test(message));
      if (!retryable || attempt >= this.client.retries) {
        if (status === 404) return { ok: false, reason: `PR #${input.prNumber} not found` };
        if (status === 405 || status === 409 || status === 422) {
          return { ok: false, reason: `GitHub refused to merge PR #${input.prNumber}: ${message}` };
        }
        throw failure;
      }
      this.client.log.warn(
        { repo: `${p.owner}/${p.repo}`, pr: input.prNumber, attempt, status },
        'merging failed and the PR is not merged; trying again',
      );
      await this.client.backoff(attempt);
    }
  }

  async deleteBranch(repo: ForgeRepo, branch: string): Promise<void> {
    const api = await this.client.forRepo(repo);
    const route = `DELETE /repos/{owner}/{repo}/git/refs/heads/${pathOf(branch)}`;
    await unless([404, 422], null, () => api.request(route, params(repo)));
  }

  async requiredStatuses(repo: ForgeRepo, branch: string): Promise<RequiredStatuses> {
    const api = await this.client.forRepo(repo);
    return readRequiredStatuses(api, this.client.log, params(repo), branch);
  }

  /**
   * Tells the PR's author where it stands. Optional fields (the queue's settings, wired by the caller):
   * `comments` / `statusCheck` turn the one upserted comment and the `mainline/merge-queue` commit status
   * on or off (default: the constructor's talkBack); `details` is added to the comment; `targetUrl` links
   * the status.
   */
  async reportPrState(repo: ForgeRepo, input: ReportInput): Promise<void> {
    const api = await this.client.forRepo(repo);
    await reportPrState(api, this.client, params(repo), input, this.#talkBack);
  }

  /** Opens a draft PR for a test branch (createPrsForTestingBranches); returns its number. */
  async createDraftPullRequest(
    repo: ForgeRepo,
    input: { testBranch: string; base: string; title: string; body: string },
  ): Promise<number> {
    const api = await this.client.forRepo(repo);
    const res = await api.request('POST /repos/{owner}/{repo}/pulls', {
      ...params(repo),
      title: input.title,
      head: input.testBranch,
      base: input.base,
      body: input.body,
      draft: true,
    });
    return res.data.number;
  }

  /**
   * The user's role on the repository: `role_name` (admin, maintain, write, triage, read) where GitHub
   * gives it, else the older `permission` (maintain reads as write there); "none" for a user GitHub
   * does not know or who is not a collaborator.
   */
  async collaboratorPermission(repo: ForgeRepo, login: string): Promise<string> {
    const api = await this.client.forRepo(repo);
    const res = await unless([404], null, () =>
      api.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', {
        ...params(repo),
        username: login,
      }),
    );
    if (res === null) return 'none';
    const data = res.data as { permission?: string; role_name?: string };
    return (data.role_name ?? data.permission ?? 'none').toLowerCase();
  }

  /**
   * A GitHub Actions run of the repository (`GET /repos/{owner}/{repo}/actions/runs/{run_id}`, which
   * needs the Actions: read permission); null when GitHub has no such run in this repository.
   */
  async workflowRun(repo: ForgeRepo, runId: number): Promise<WorkflowRun | null> {
    const api = await this.client.forRepo(repo);
    const res = await unless([404], null, () =>
      api.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}', { ...params(repo), run_id: runId }),
    );
    if (res === null) return null;
    const run = res.data as unknown as GhWorkflowRun;
    const started = Date.parse(run.run_started_at ?? run.created_at);
    return {
      id: run.id,
      event: run.event,
      status: run.status ?? '',
      headSha: run.head_sha,
      repositoryFullName: run.repository.full_name,
      headRepositoryFullName: run.head_repository?.full_name ?? null,
      // An unreadable date counts as the epoch: too old to vouch for anything.
      startedAt: Number.isNaN(started) ? 0 : started,
    };
  }

  /** Takes a label off a PR (the enqueueing label once the PR is in the queue); one not there is ignored. */
  async removeLabel(repo: ForgeRepo, number: number, label: string): Promise<void> {
    const api = await this.client.forRepo(repo);
    await removeLabel(api, params(repo), number, label);
  }

  /** Closes a PR (a test branch's draft PR); a PR that does not exist is ignored. */
  async closePullRequest(repo: ForgeRepo, number: number): Promise<void> {
    const api = await this.client.forRepo(repo);
    await unless([404], null, () =>
      api.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', {
        ...params(repo),
        pull_number: number,
        state: 'closed',
      }),
    );
  }
}

function mergeability(pr: GhPull): Mergeability {
  if (pr.draft === true) return 'not_mergeable';
  if (pr.mergeable === true) return 'mergeable';
  return pr.mergeable === false ? 'not_mergeable' : 'in_progress';
}
