import { AppError } from '../../domain/errors.ts';
import { getPrRecord, isTerminal } from '../../domain/queue/index.ts';
import { upsertCommitStatus } from '../../store/forge/git-prs.ts';
import { findQueue, listQueues } from '../../store/queue/queues.ts';
import { findRepo } from '../../store/tenancy/repos.ts';
import type { AppContext, Caller } from '../context.ts';
import { deliveryOrg } from '../forge-grants.ts';
import type { Forge, ForgeRepo } from '../ports.ts';
import { applyEvent, queueStateOf } from '../queue/apply.ts';
import { deliverStatuses } from '../queue/git-api.ts';
import { cancelPullRequest, submitPullRequest } from '../queue/prs.ts';
import { labelEvent } from './labels.ts';
import { refusalOf, type WriterCache } from './writers.ts';

/** The parts of GitHub's webhook payloads Mainline reads (docs/github.md). */
interface Payload {
  action?: string;
  repository?: { name?: string; owner?: { login?: string } };
  installation?: { id?: number };
  number?: number;
  pull_request?: { number?: number; merged?: boolean; head?: { sha?: string }; base?: { ref?: string } };
  issue?: { number?: number; pull_request?: unknown };
  comment?: { body?: string; user?: { login?: string }; author_association?: string };
  check_run?: {
    name?: string;
    head_sha?: string;
    status?: string;
    conclusion?: string | null;
    details_url?: string;
  };
  sha?: string;
  state?: string;
  context?: string;
  target_url?: string | null;
  ref?: string;
  after?: string;
  /** Who caused the event (the user who added or removed a label). */
  sender?: { login?: string };
  label?: { name?: string };
}

/** A check run's conclusion as a commit-status state (what the queue's required statuses are matched on). */
const CONCLUSION: Record<string, 'success' | 'failure' | 'error' | 'pending'> = {
  success: 'success',
  neutral: 'success',
  skipped: 'success',
  failure: 'failure',
  timed_out: 'failure',
  action_required: 'failure',
  cancelled: 'error',
  stale: 'error',
  startup_failure: 'error',
};

/** What a comment asks of the queue: `/mainline merge` or `/mainline cancel` on a line of its own. */
export function commentCommand(body: string): 'merge' | 'cancel' | null {
  for (const line of body.split(/\r?\n/)) {
    const m = /^\s*\/mainline\s+(merge|cancel)\s*$/i.exec(line);
    if (m?.[1] !== undefined) return m[1].toLowerCase() as 'merge' | 'cancel';
  }
  return null;
}

/**
 * Carries out one stored GitHub delivery for the one organization it belongs to (the organization the
 * App installation was connected to, else the one granted the repository's owner: never every
 * organization that has a repository of that name), and returns what it did in words (kept on the
 * delivery for operators). Safe to repeat: every effect is an idempotent queue event or status upsert.
 */
export async function processGitHubEvent(
  ctx: AppContext,
  forge: Forge,
  event: string,
  payload: Payload,
): Promise<string> {
  const github = ctx.config.github;
  const owner = payload.repository?.owner?.login;
  const name = payload.repository?.name;
  if (github === undefined || owner === undefined || name === undefined) return 'ignored: no repository';
  const installationId = typeof payload.installation?.id === 'number' ? payload.installation.id : undefined;
  const orgId = await deliveryOrg(ctx.db, github.host, owner, installationId);
  if (orgId === undefined)
    return `ignored: ${owner} is not granted to any organization (${installationId === undefined ? 'mainline github grant' : 'mainline github connect'})`;
  const repo = await findRepo(ctx.db, orgId, {
    hostKey: github.host.toLowerCase(),
    ownerKey: owner.toLowerCase(),
    nameKey: name.toLowerCase(),
  });
  if (repo === undefined) return `ignored: ${owner}/${name} is not a Mainline repository`;
  const caller: Caller = {
    tokenId: 'github',
    tokenName: `${payload.comment?.user?.login ?? payload.sender?.login ?? 'someone'} on GitHub`,
    orgId: repo.org_id,
    orgSlug: '',
  };
  return processForRepo(ctx, forge, caller, repo, event, payload, ctx.caches.githubWriters);
}

async function processForRepo(
  ctx: AppContext,
  forge: Forge,
  caller: Caller,
  repo: ForgeRepo,
  event: string,
  p: Payload,
  writers: WriterCache,
): Promise<string> {
  switch (event) {
    case 'pull_request':
      if (p.action === 'labeled' || p.action === 'unlabeled')
        return labelEvent(ctx, forge, caller, repo, p, writers);
      return pullRequestEvent(ctx, repo, p);
    case 'issue_comment':
      return commentEvent(ctx, forge, caller, repo, p, writers);
    case 'check_run': {
      const run = p.check_run;
      if (run?.name === undefined || run.head_sha === undefined) return 'ignored: no check run';
      const state =
        run.status === 'completed' ? (CONCLUSION[run.conclusion ?? ''] ?? 'failure') : ('pending' as const);
      return statusEvent(ctx, forge, repo, run.head_sha, run.name, state, run.details_url ?? null);
    }
    case 'status': {
      const state = p.state;
      if (p.sha === undefined || p.context === undefined || !isStatusState(state))
        return 'ignored: no status';
      return statusEvent(ctx, forge, repo, p.sha, p.context, state, p.target_url ?? null);
    }
    case 'check_suite':
      // A suite carries no check names; its check_run events deliver each required check.
      return 'noted: check runs carry the results';
    case 'push':
      return pushEvent(ctx, repo, p);
    default:
      return `ignored: ${event} events are not used`;
  }
}

function isStatusState(s: string | undefined): s is 'pending' | 'success' | 'failure' | 'error' {
  return s === 'pending' || s === 'success' || s === 'failure' || s === 'error';
}

async function statusEvent(
  ctx: AppContext,
  forge: Forge,
  repo: ForgeRepo,
  rawSha: string,
  context: string,
  state: 'pending' | 'success' | 'failure' | 'error',
  url: string | null,
): Promise<string> {
  const sha = rawSha.toLowerCase();
  await upsertCommitStatus(ctx.db, { repo_id: repo.id, sha, context, state, url, updated_at: ctx.now() });
  await deliverStatuses(ctx, forge, repo, sha);
  return `status ${context}=${state} at ${sha.slice(0, 12)}`;
}

/** New commits on a queued PR restart it; closing it (unless the queue merged it) cancels it. */
async function pullRequestEvent(ctx: AppContext, repo: ForgeRepo, p: Payload): Promise<string> {
  const number = p.pull_request?.number ?? p.number;
  if (number === undefined) return 'ignored: no pull request';
  const done: string[] = [];
  for (const row of await listQueues(ctx.db, [repo.id])) {
    const state = await queueStateOf(ctx, row);
    const entry = getPrRecord(state, number);
    if (entry === undefined || isTerminal(entry.state)) continue;
    if (p.action === 'synchronize' && p.pull_request?.head?.sha !== undefined) {
      const headSha = p.pull_request.head.sha.toLowerCase();
      if (headSha === entry.headSha) continue;
      await applyEvent(ctx, row.id, { type: 'pr_head_updated', prNumber: number, headSha }, ctx.now());
      done.push(`#${number} head updated in queue ${state.branch}`);
    } else if (p.action === 'closed') {
      // The queue's own merge closes the PR too: the merge's answer settles it, not this event.
      if (p.pull_request?.merged === true && state.merging?.prNumber === number) continue;
      const reason = p.pull_request?.merged
        ? 'The pull request was merged outside the queue'
        : 'The pull request was closed';
      await applyEvent(ctx, row.id, { type: 'pr_cancelled', prNumber: number, reason }, ctx.now());
      done.push(`#${number} cancelled in queue ${state.branch}`);
    }
  }
  return done.length > 0 ? done.join(', ') : `pull_request ${p.action ?? ''}: nothing to do`;
}

/** `/mainline merge` queues the PR on its base branch's queue; `/mainline cancel` takes it out. */
async function commentEvent(
  ctx: AppContext,
  forge: Forge,
  caller: Caller,
  repo: ForgeRepo & { org_id?: string },
  p: Payload,
  writers: WriterCache,
): Promise<string> {
  if (p.action !== 'created' || p.issue?.pull_request === undefined || p.issue.number === undefined)
    return 'ignored: not a new pull request comment';
  const command = commentCommand(p.comment?.body ?? '');
  if (command === null) return 'ignored: no /mainline command';
  const number = p.issue.number;
  const pr = await forge.pullRequest(repo, number);
  if (pr === null) return `ignored: #${number} not found on GitHub`;
  const row = await findQueue(ctx.db, repo.id, pr.baseBranch);
  if (row === undefined) return `ignored: no queue for ${pr.baseBranch}`;
  const state = await queueStateOf(ctx, row);
  if (!state.settings.commandsEnabled) return `ignored: commands are off for queue ${pr.baseBranch}`;
  const login = p.comment?.user?.login;
  const refusal = await refusalOf(forge, writers, repo, login, p.comment?.author_association, ctx.now());
  if (refusal !== null) {
    // Nothing changes in the queue; the commenter is told why (when the queue comments at all).
    await forge.reportPrState(repo, {
      prNumber: number,
      headSha: pr.headSha,
      state: getPrRecord(state, number)?.state ?? 'not_ready',
      reason: `/mainline ${command} was refused: ${refusal}`,
      comments: state.settings.commentsEnabled,
      statusCheck: false,
    });
    return `/mainline ${command} on #${number} refused: ${refusal}`;
  }
  const ref = { host: repo.host, owner: repo.owner, name: repo.name };
  const body = { repo: ref, targetBranch: pr.baseBranch, pr: { number } };
  try {
    if (command === 'merge') await submitPullRequest(ctx, caller, forge, body);
    else await cancelPullRequest(ctx, caller, body);
  } catch (error) {
    // A refusal (closed PR, not in the queue) is an answer, not a failure to retry.
    if (!(error instanceof AppError)) throw error;
    const message = (error as Error).message;
    await forge.reportPrState(repo, {
      prNumber: number,
      headSha: pr.headSha,
      state: getPrRecord(state, number)?.state ?? 'not_ready',
      reason: `/mainline ${command} was refused: ${message}`,
    });
    return `/mainline ${command} on #${number} refused: ${message}`;
  }
  return `/mainline ${command} on #${number}`;
}

/**
 * A push to a queue's target branch that the queue did not make: the queue rebuilds on the new head.
 * GitLab's push event carries the same `ref` and `after`, so its webhook uses this too.
 */
export async function pushEvent(
  ctx: AppContext,
  repo: ForgeRepo,
  p: { ref?: string | undefined; after?: string | undefined },
): Promise<string> {
  const branch = p.ref?.startsWith('refs/heads/') ? p.ref.slice('refs/heads/'.length) : undefined;
  if (branch === undefined || p.after === undefined || /^0+$/.test(p.after))
    return 'ignored: not a branch push';
  const row = await findQueue(ctx.db, repo.id, branch);
  if (row === undefined) return `push to ${branch}: no queue`;
  const state = await queueStateOf(ctx, row);
  const sha = p.after.toLowerCase();
  if (state.targetHead === sha || state.merging !== null) return `push to ${branch}: already known`;
  await applyEvent(ctx, row.id, { type: 'target_moved', sha }, ctx.now());
  return `push to ${branch}: target moved to ${sha.slice(0, 12)}`;
}
