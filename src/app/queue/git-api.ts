import { AppError } from '../../domain/errors.ts';
import { getPrRecord, isTerminal } from '../../domain/queue/index.ts';
import {
  commitStatuses,
  findPullRequest,
  setPullRequestState,
  upsertCommitStatus,
  upsertPullRequest,
} from '../../store/forge/git-prs.ts';
import { listQueues } from '../../store/queue/queues.ts';
import type { AppContext, Caller } from '../context.ts';
import type { Forge, ForgeRepo, RepositoryHostingForge } from '../ports.ts';
import { ensureRepository, findRepository, type RepoRef } from '../repositories.ts';
import { applyEvent, queueStateOf } from './apply.ts';
import { checkReports } from './checks.ts';
import { ciEvents, flakeProtectionOf } from './flake-judge.ts';

/** The plain-git forge's repository for a Mainline repository: created (bare) if absent; users push to its path. */
export async function createGitRepository(
  ctx: AppContext,
  caller: Caller,
  forge: RepositoryHostingForge,
  repo: RepoRef,
) {
  const unusable = forge.unusableName(repo);
  if (unusable !== null) {
    throw new AppError(
      'VALIDATION_FAILED',
      `${repo.host}/${repo.owner}/${repo.name} cannot be a git repository on this server: ${unusable} (use letters, digits, ".", "_" and "-"; no "..")`,
      {
        details: [{ path: '$.repo', expected: 'a repository name usable as a folder', message: unusable }],
      },
    );
  }
  const { repository } = await ensureRepository(ctx.db, caller, repo, ctx.now());
  return { path: await forge.ensureRepository(repository) };
}

/** Registers (or updates) a pull request of the plain-git forge: a head branch proposed for a base branch. */
export async function registerPullRequest(
  ctx: AppContext,
  caller: Caller,
  forge: RepositoryHostingForge,
  body: {
    repo: RepoRef;
    number: number;
    title: string;
    author: string;
    headBranch: string;
    baseBranch: string;
  },
) {
  const repository = await findRepository(ctx.db, caller, body.repo);
  const headSha = await forge.head(repository, body.headBranch);
  if (headSha === null) {
    throw new AppError(
      'BAD_REQUEST',
      `Branch "${body.headBranch}" does not exist in ${body.repo.owner}/${body.repo.name}; push it first`,
    );
  }
  const now = ctx.now();
  const existing = await findPullRequest(ctx.db, repository.id, body.number);
  await upsertPullRequest(ctx.db, {
    repo_id: repository.id,
    number: body.number,
    title: body.title,
    author: body.author,
    head_branch: body.headBranch,
    base_branch: body.baseBranch,
    state: 'open',
    created_at: existing?.created_at ?? now,
    updated_at: now,
  });
  return { pullRequest: { ...body, repo: undefined, headSha, state: 'open' as const } };
}

/** Closes a pull request: every queue holding it cancels it. */
export async function closePullRequest(
  ctx: AppContext,
  caller: Caller,
  body: { repo: RepoRef; number: number },
): Promise<void> {
  const repository = await findRepository(ctx.db, caller, body.repo);
  if ((await findPullRequest(ctx.db, repository.id, body.number)) === undefined) {
    throw new AppError('PR_NOT_FOUND', `Pull request #${body.number} is not registered`);
  }
  await setPullRequestState(ctx.db, repository.id, body.number, 'closed', ctx.now());
  for (const row of await listQueues(ctx.db, [repository.id])) {
    const entry = getPrRecord(await queueStateOf(ctx, row), body.number);
    if (entry === undefined || isTerminal(entry.state)) continue;
    await applyEvent(
      ctx,
      row.id,
      { type: 'pr_cancelled', prNumber: body.number, reason: 'The pull request was closed' },
      ctx.now(),
    );
  }
}

/**
 * Feeds the statuses reported for `sha` to the queues: to the runs tested at that commit, judged by the
 * queue's flake protection (statuses older than a run are not its own: a retried run can have the same
 * commit), and to the submitted PRs whose head it is (their readiness needs the required ones passed).
 */
export async function deliverStatuses(
  ctx: AppContext,
  forge: Forge,
  repo: ForgeRepo,
  sha: string,
): Promise<void> {
  const statuses = await commitStatuses(ctx.db, repo.id, sha);
  if (statuses.length === 0) return;
  for (const row of await listQueues(ctx.db, [repo.id])) {
    const state = await queueStateOf(ctx, row);
    const heads = state.prs.values().filter((e) => e.headSha === sha && !isTerminal(e.state));
    for (const e of heads) {
      const event = {
        type: 'pr_checks_reported' as const,
        prNumber: e.number,
        headSha: sha,
        checks: checkReports(statuses),
      };
      await applyEvent(ctx, row.id, event, ctx.now());
    }
    const runs = Object.values(state.runs).filter(
      (r) => r.testBranchSha === sha && (r.status === 'in_progress' || r.status === 'building'),
    );
    if (runs.length === 0) continue;
    const mode = await flakeProtectionOf(forge, repo, row, state.branch);
    for (const run of runs) {
      const checks = checkReports(statuses.filter((s) => s.updated_at >= run.createdAt));
      if (checks.length === 0) continue;
      for (const event of await ciEvents(ctx.db, {
        queue: row,
        run,
        checks,
        mode,
        now: ctx.now(),
        passBlobs: ctx.caches.passBlobs,
      })) {
        await applyEvent(ctx, row.id, event, ctx.now());
      }
    }
  }
}

/** A CI system reports a commit status (like GitHub's statuses API); runs at that commit hear of it. */
export async function reportStatus(
  ctx: AppContext,
  caller: Caller,
  forge: Forge,
  body: {
    repo: RepoRef;
    sha: string;
    context: string;
    state: 'pending' | 'success' | 'failure' | 'error';
    url?: string | undefined;
  },
): Promise<void> {
  const repository = await findRepository(ctx.db, caller, body.repo);
  const sha = body.sha.toLowerCase();
  await upsertCommitStatus(ctx.db, {
    repo_id: repository.id,
    sha,
    context: body.context,
    state: body.state,
    url: body.url ?? null,
    updated_at: ctx.now(),
  });
  await deliverStatuses(ctx, forge, repository, sha);
}
