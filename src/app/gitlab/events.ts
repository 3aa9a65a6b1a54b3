import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import { splitProjectPath } from '../../domain/gitlab-path.ts';
import { getPrRecord, isTerminal } from '../../domain/queue/index.ts';
import { upsertCommitStatus } from '../../store/forge/git-prs.ts';
import {
  deleteDelivery,
  insertHandledDelivery,
  pruneDeliveriesWithPrefix,
  setDeliveryOutcome,
} from '../../store/forge/github.ts';
import { findGrant } from '../../store/forge/grants.ts';
import {
  findQueue,
  listQueues,
  wakeRepositoryWaitingActions,
  wakeWaitingActions,
} from '../../store/queue/queues.ts';
import { findRepo } from '../../store/tenancy/repos.ts';
import type { AppContext, Caller } from '../context.ts';
import { commentCommand, pushEvent } from '../github/events.ts';
import type { Forge, ForgeRepo, GitLabEventForge } from '../ports.ts';
import { applyEvent, queueStateOf } from '../queue/apply.ts';
import { deliverStatuses } from '../queue/git-api.ts';
import { cancelPullRequest, submitPullRequest } from '../queue/prs.ts';

/** The parts of GitLab's webhook payloads Mainline reads (docs/gitlab.md). */
export interface GitLabPayload {
  object_kind?: string;
  project?: { path_with_namespace?: string };
  user?: { id?: number; username?: string };
  user_username?: string;
  ref?: string;
  after?: string;
  checkout_sha?: string | null;
  sha?: string;
  object_attributes?: {
    iid?: number;
    action?: string;
    state?: string;
    oldrev?: string;
    last_commit?: { id?: string };
    note?: string;
    noteable_type?: string;
    sha?: string;
    target_branch?: string;
  };
  merge_request?: { iid?: number; target_branch?: string };
}

/** Compares the X-Gitlab-Token header with the secret without telling how much of it matched. */
export function validGitLabToken(secret: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

/** Roles (roleOfAccessLevel) that may drive the queue: Developer (30) and above. */
const WRITERS = new Set(['write', 'maintain', 'admin']);

/**
 * Checks a GitLab webhook delivery (X-Gitlab-Token), drops a repeat (X-Gitlab-Event-UUID, else
 * Idempotency-Key) and carries it out for the one organization granted the project's namespace.
 * Processed before answering; when processing fails the delivery is forgotten, so GitLab's retry
 * is carried out.
 */
export async function receiveGitLabDelivery(
  ctx: AppContext,
  forge: GitLabEventForge | undefined,
  routing: Forge,
  delivery: { token: string | undefined; event: string | undefined; uuid: string | undefined; body: Buffer },
): Promise<{ id: string; duplicate: boolean; outcome: string }> {
  const gitlab = ctx.config.gitlab;
  if (gitlab?.webhookSecret === undefined || forge === undefined) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'GitLab webhooks are not configured on this server: set MAINLINE_GITLAB_WEBHOOK_SECRET (and MAINLINE_GITLAB_TOKEN)',
    );
  }
  if (!validGitLabToken(gitlab.webhookSecret, delivery.token)) {
    throw new AppError(
      'INVALID_SIGNATURE',
      'The X-Gitlab-Token header is missing or is not the configured webhook secret token',
    );
  }
  if (delivery.uuid === undefined || delivery.event === undefined) {
    throw new AppError(
      'BAD_REQUEST',
      'X-Gitlab-Event and X-Gitlab-Event-UUID (or Idempotency-Key) headers are required',
    );
  }
  let payload: GitLabPayload;
  try {
    payload = JSON.parse(delivery.body.toString('utf8')) as GitLabPayload;
  } catch {
    throw new AppError('INVALID_JSON', 'The delivery body is not JSON');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new AppError('INVALID_JSON', 'The delivery body is not a JSON object');
  }
  // Repeats are recognised through the GitHub deliveries table under a "gitlab:" id, stored as
  // processed so the GitHub processor never picks them up; pruned with them.
  const id = `gitlab:${delivery.uuid}`;
  const inserted = await insertHandledDelivery(ctx.db, {
    id,
    event: `gitlab:${delivery.event}`.slice(0, 200),
    action: typeof payload.object_kind === 'string' ? payload.object_kind : null,
    at: ctx.now(),
  });
  await pruneSeen(ctx);
  if (!inserted) {
    return { id: delivery.uuid, duplicate: true, outcome: 'duplicate' };
  }
  let outcome: string;
  try {
    outcome = await processGitLabEvent(ctx, forge, routing, payload);
  } catch (error) {
    await deleteDelivery(ctx.db, id);
    // Not the sender's fault: a 503 makes GitLab deliver it again later.
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `The delivery could not be carried out now: ${(error as Error).message}`,
    );
  }
  await setDeliveryOutcome(ctx.db, id, outcome);
  return { id: delivery.uuid, duplicate: false, outcome };
}

/** Delivery ids are remembered this long (GitLab retries within hours, not weeks). */
const KEEP_MS = 14 * 24 * 3_600_000;
let prunedAt = Number.NEGATIVE_INFINITY;

/** Forgets old delivery ids, at most once an hour per process. */
async function pruneSeen(ctx: AppContext): Promise<void> {
  const now = ctx.now();
  if (now - prunedAt < 3_600_000) return;
  prunedAt = now;
  await pruneDeliveriesWithPrefix(ctx.db, 'gitlab:', now - KEEP_MS);
}

/**
 * One delivery, for the organization granted the project's namespace on the GitLab host (never
 * another organization with a repository of the same name). Returns what it did, in words.
 */
export async function processGitLabEvent(
  ctx: AppContext,
  forge: GitLabEventForge,
  routing: Forge,
  p: GitLabPayload,
): Promise<string> {
  const host = ctx.config.gitlab?.host;
  const path = p.project?.path_with_namespace;
  const parts = typeof path === 'string' ? splitProjectPath(path) : null;
  if (host === undefined || parts === null) return 'ignored: no project';
  const grant = await findGrant(ctx.db, host.toLowerCase(), parts.owner.toLowerCase());
  if (grant === undefined)
    return `ignored: ${parts.owner} is not granted to any organization (mainline gitlab grant)`;
  const repo = await findRepo(ctx.db, grant.org_id, {
    hostKey: host.toLowerCase(),
    ownerKey: parts.owner.toLowerCase(),
    nameKey: parts.name.toLowerCase(),
  });
  if (repo === undefined) return `ignored: ${path} is not a Mainline repository`;
  const username = p.user?.username ?? p.user_username ?? 'someone';
  const caller: Caller = {
    tokenId: 'gitlab',
    tokenName: `${username} on GitLab`,
    orgId: repo.org_id,
    orgSlug: '',
  };
  switch (p.object_kind) {
    case 'merge_request':
      return mergeRequestEvent(ctx, routing, repo, p);
    case 'note':
      return noteEvent(ctx, forge, routing, caller, repo, p);
    case 'pipeline':
    case 'build': {
      const sha = p.object_kind === 'pipeline' ? p.object_attributes?.sha : p.sha;
      if (typeof sha !== 'string' || !/^[0-9a-f]{40}$/i.test(sha)) return 'ignored: no commit';
      return statusesOf(ctx, forge, routing, repo, sha.toLowerCase());
    }
    case 'push':
      return pushEvent(ctx, repo, p);
    default:
      return `ignored: ${p.object_kind ?? 'unknown'} events are not used`;
  }
}

/** A pipeline or job changed on a commit: its statuses, as GitLab has them now, go to the queues. */
async function statusesOf(
  ctx: AppContext,
  forge: GitLabEventForge,
  routing: Forge,
  repo: ForgeRepo,
  sha: string,
): Promise<string> {
  const statuses = await forge.commitStatuses(repo, sha);
  for (const s of statuses) {
    await upsertCommitStatus(ctx.db, {
      repo_id: repo.id,
      sha,
      context: s.name,
      state: s.state,
      url: s.url,
      updated_at: ctx.now(),
    });
  }
  await deliverStatuses(ctx, routing, repo, sha);
  // A merge waiting for a merge request's pipeline (auto-merge) looks again now.
  await wakeRepositoryWaitingActions(ctx.db, repo.id, ctx.now());
  return `statuses at ${sha.slice(0, 12)}: ${statuses.map((s) => `${s.name}=${s.state}`).join(', ') || 'none'}`;
}

/**
 * New commits on a queued merge request restart it; closing it (not by the queue's merge) cancels it;
 * any other change (an approval, a draft flag, a resolved thread) has its mergeability read again.
 */
async function mergeRequestEvent(
  ctx: AppContext,
  routing: Forge,
  repo: ForgeRepo,
  p: GitLabPayload,
): Promise<string> {
  const a = p.object_attributes;
  const number = a?.iid;
  if (typeof number !== 'number') return 'ignored: no merge request';
  const done: string[] = [];
  for (const row of await listQueues(ctx.db, [repo.id])) {
    const state = await queueStateOf(ctx, row);
    const entry = getPrRecord(state, number);
    if (entry === undefined || isTerminal(entry.state)) continue;
    const head = a?.last_commit?.id?.toLowerCase();
    // The merge request being merged is left to its merge, as the runner's poll leaves it: in a
    // fast-forward or semi-linear project the merge itself pushes the rebased head it tested (with a
    // lease on the queued head), and GitLab's merge with that SHA refuses any other push.
    if (state.merging?.prNumber === number && (a?.state === 'opened' || a?.state === 'merged')) {
      // Its merge may be waiting for GitLab (auto-merge): it looks again now.
      await wakeWaitingActions(ctx.db, row.id, ctx.now());
      continue;
    }
    if (a?.state === 'opened' && head !== undefined && head !== entry.headSha) {
      await applyEvent(ctx, row.id, { type: 'pr_head_updated', prNumber: number, headSha: head }, ctx.now());
      done.push(`!${number} head updated in queue ${state.branch}`);
    } else if (a?.state === 'opened') {
      const read = await routing.pullRequest(repo, number);
      if (read === null || read.mergeability === entry.mergeability) continue;
      await applyEvent(
        ctx,
        row.id,
        { type: 'pr_readiness_changed', prNumber: number, mergeability: read.mergeability },
        ctx.now(),
      );
      done.push(`!${number} now ${read.mergeability} in queue ${state.branch}`);
    } else if (a?.state === 'closed' || a?.state === 'merged' || a?.state === 'locked') {
      const reason =
        a.state === 'merged'
          ? 'The merge request was merged outside the queue'
          : 'The merge request was closed';
      await applyEvent(ctx, row.id, { type: 'pr_cancelled', prNumber: number, reason }, ctx.now());
      done.push(`!${number} cancelled in queue ${state.branch}`);
    }
  }
  return done.length > 0 ? done.join(', ') : `merge_request ${a?.action ?? ''}: nothing to do`;
}

/**
 * `/mainline merge` and `/mainline cancel` in a merge request note, honoured only from a user whose
 * effective access to the project is Developer or more (asked of GitLab by the note's user id).
 */
async function noteEvent(
  ctx: AppContext,
  forge: GitLabEventForge,
  routing: Forge,
  caller: Caller,
  repo: ForgeRepo,
  p: GitLabPayload,
): Promise<string> {
  if (p.object_attributes?.noteable_type !== 'MergeRequest') return 'ignored: not a merge request note';
  const command = commentCommand(p.object_attributes.note ?? '');
  if (command === null) return 'ignored: no /mainline command';
  const number = p.merge_request?.iid;
  if (typeof number !== 'number') return 'ignored: no merge request';
  const pr = await routing.pullRequest(repo, number);
  if (pr === null) return `ignored: !${number} not found on GitLab`;
  const row = await findQueue(ctx.db, repo.id, pr.baseBranch);
  if (row === undefined) return `ignored: no queue for ${pr.baseBranch}`;
  const state = await queueStateOf(ctx, row);
  if (!state.settings.commandsEnabled) return `ignored: commands are off for queue ${pr.baseBranch}`;
  const userId = p.user?.id;
  const login = p.user?.username;
  let refusal: string | null;
  if (typeof userId !== 'number' || login === undefined) refusal = 'the note has no author';
  else {
    const writers = ctx.caches.gitlabWriters;
    const role = writers.get(repo.id, `#${userId}`, ctx.now()) ?? (await forge.accessRole(repo, userId));
    writers.set(repo.id, `#${userId}`, role, ctx.now());
    refusal = WRITERS.has(role)
      ? null
      : `@${login} has less than Developer access to ${repo.owner}/${repo.name}; only Developers, Maintainers and Owners can drive the merge queue`;
  }
  const tell = (reason: string) =>
    routing.reportPrState(repo, {
      prNumber: number,
      headSha: pr.headSha,
      state: getPrRecord(state, number)?.state ?? 'not_ready',
      reason,
      comments: state.settings.commentsEnabled,
      statusCheck: false,
    });
  if (refusal !== null) {
    await tell(`/mainline ${command} was refused: ${refusal}`);
    return `/mainline ${command} on !${number} refused: ${refusal}`;
  }
  const body = {
    repo: { host: repo.host, owner: repo.owner, name: repo.name },
    targetBranch: pr.baseBranch,
    pr: { number },
  };
  try {
    if (command === 'merge') await submitPullRequest(ctx, caller, routing, body);
    else await cancelPullRequest(ctx, caller, body);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    await tell(`/mainline ${command} was refused: ${error.message}`);
    return `/mainline ${command} on !${number} refused: ${error.message}`;
  }
  return `/mainline ${command} on !${number}`;
}
