import { AppError } from '../../domain/errors.ts';
import {
  getPrRecord,
  type ImpactedTargets,
  isTerminal,
  type PrEntry,
  type PriorityName,
  type QueueState,
  type TestRun,
} from '../../domain/queue/index.ts';
import { commitStatuses } from '../../store/forge/git-prs.ts';
import { archivedPr, archivedRuns } from '../../store/queue/archive.ts';
import { judgementsSince } from '../../store/queue/flake.ts';
import { findImpactedTargets, saveImpactedTargets } from '../../store/uploads/impacted.ts';
import type { AppContext, Caller } from '../context.ts';
import type { Forge } from '../ports.ts';
import type { RepoRef } from '../repositories.ts';
import { applyEvent, discoveredEvent } from './apply.ts';
import { checkReports } from './checks.ts';
import { judgementRecord } from './flake-judge.ts';
import { findQueueOf } from './queues.ts';
import { enqueuedPrRecord } from './records.ts';

interface PrRequest {
  repo: RepoRef;
  targetBranch: string;
  pr: { number: number };
}

const PRIORITY_NAMES = ['urgent', 'high', 'medium', 'low'];

/** A priority as sent (a name in any case, or 0–255 with 0 highest), or a 400 that says what is allowed. */
function priorityOf(priority: number | string | null | undefined): number | PriorityName | null {
  if (priority === undefined || priority === null) return null;
  if (typeof priority === 'number') {
    if (Number.isInteger(priority) && priority >= 0 && priority <= 255) return priority;
  } else if (PRIORITY_NAMES.includes(priority.toLowerCase())) {
    return priority.toLowerCase() as PriorityName;
  }
  const message =
    '$.priority must be one of low, medium, high, urgent, or a whole number from 0 (highest) to 255';
  throw new AppError('VALIDATION_FAILED', message, {
    details: [{ path: '$.priority', expected: 'low, medium, high, urgent, or 0–255', message }],
  });
}

function submitted(entry: PrEntry | undefined, n: number): PrEntry {
  if (entry === undefined)
    throw new AppError('PR_NOT_FOUND', `Pull request #${n} was never submitted to this queue`);
  return entry;
}

/** submitPullRequest: asks the forge about the PR, then queues it. Submitting a queued PR again changes nothing. */
export async function submitPullRequest(
  ctx: AppContext,
  caller: Caller,
  forge: Forge,
  body: PrRequest & { priority?: number | string | null | undefined; noBatch?: boolean | undefined },
): Promise<void> {
  const priority = priorityOf(body.priority);
  const queue = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  const pr = await forge.pullRequest({ ...body.repo, id: queue.repoId }, body.pr.number);
  if (pr === null) {
    throw new AppError(
      'PR_NOT_FOUND',
      `Pull request #${body.pr.number} does not exist in ${body.repo.owner}/${body.repo.name}`,
    );
  }
  if (pr.state !== 'open')
    throw new AppError(
      'BAD_REQUEST',
      `Pull request #${pr.number} is ${pr.state}; only open pull requests can be queued`,
    );
  const { state: _s, headBranch: _h, ...snapshot } = pr;
  const repo = { ...body.repo, id: queue.repoId };
  const required = await forge.requiredStatuses(repo, body.targetBranch);
  await applyEvent(ctx, queue.row.id, discoveredEvent(required), ctx.now());
  // CI may have reported on the head before the submission: those results count for its readiness.
  const checks = checkReports(await commitStatuses(ctx.db, queue.repoId, pr.headSha));
  await applyEvent(
    ctx,
    queue.row.id,
    {
      type: 'pr_submitted',
      pr: snapshot,
      priority,
      ...(body.noBatch !== undefined ? { noBatch: body.noBatch } : {}),
      checks,
    },
    ctx.now(),
  );
  const stored = await findImpactedTargets(ctx.db, queue.repoId, pr.number, pr.headSha);
  if (stored !== undefined) {
    const targets = JSON.parse(stored.targets) as ImpactedTargets;
    const event = {
      type: 'impacted_targets_set' as const,
      prNumber: pr.number,
      headSha: pr.headSha,
      targets,
    };
    await applyEvent(ctx, queue.row.id, event, ctx.now());
  }
}

/** The most recent flake-protection judgement of a run (live or archived) that tested this submission of the PR. */
async function latestJudgement(ctx: AppContext, queueId: string, state: QueueState, e: PrEntry) {
  const judgements = await judgementsSince(ctx.db, queueId, e.submittedAt);
  // The judged runs no longer live, in one statement rather than one per judgement.
  const gone = judgements.map((j) => j.run_id).filter((id) => state.runs[id] === undefined);
  const archived = gone.length === 0 ? new Map<string, TestRun>() : await archivedRuns(ctx.db, queueId, gone);
  for (const judged of judgements) {
    const run = state.runs[judged.run_id] ?? archived.get(judged.run_id);
    if (run?.tested.includes(e.number)) return judged;
  }
  return undefined;
}

/**
 * Why a PR passed although tests failed in its run, in words for its comment, when flake protection
 * decided so (failures only in quarantined tests, or a flaky test's retry passed); undefined otherwise.
 */
export async function flakeProtectionNote(
  ctx: AppContext,
  queueId: string,
  state: QueueState,
  prNumber: number,
): Promise<string | undefined> {
  const entry = await findSubmission(ctx, queueId, state, prNumber);
  if (entry === undefined) return undefined;
  const judged = await latestJudgement(ctx, queueId, state, entry);
  if (judged === undefined) return undefined;
  const record = judgementRecord(judged);
  if (record.decision !== 'ignored_quarantined' && record.decision !== 'retried_flaky') return undefined;
  const tests = record.tests
    .map((t) => `- \`${t.name}\` (${t.quarantined ? 'quarantined' : t.status.toLowerCase()})`)
    .join('\n');
  return `**Flake protection:** ${record.reason}${tests === '' ? '' : `\n\n${tests}`}`;
}

/** The PR's latest submission: in the live queue, else in the queue's archive of finished ones. */
async function findSubmission(
  ctx: AppContext,
  queueId: string,
  state: QueueState,
  n: number,
): Promise<PrEntry | undefined> {
  return getPrRecord(state, n) ?? (await archivedPr(ctx.db, queueId, n));
}

/** The PR's latest submission, or a 404 when it was never submitted. */
async function latestSubmission(
  ctx: AppContext,
  queueId: string,
  state: QueueState,
  n: number,
): Promise<PrEntry> {
  return submitted(await findSubmission(ctx, queueId, state, n), n);
}

async function inQueue(ctx: AppContext, caller: Caller, body: PrRequest) {
  const queue = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  const entry = await latestSubmission(ctx, queue.row.id, queue.state, body.pr.number);
  if (isTerminal(entry.state)) {
    throw new AppError(
      'BAD_REQUEST',
      `Pull request #${entry.number} is not in the queue any more (it is ${entry.state})`,
    );
  }
  return queue;
}

export async function cancelPullRequest(ctx: AppContext, caller: Caller, body: PrRequest): Promise<void> {
  const queue = await inQueue(ctx, caller, body);
  const reason = `Cancelled through the API by ${caller.tokenName}`;
  await applyEvent(ctx, queue.row.id, { type: 'pr_cancelled', prNumber: body.pr.number, reason }, ctx.now());
}

export async function restartTests(ctx: AppContext, caller: Caller, body: PrRequest): Promise<void> {
  const queue = await inQueue(ctx, caller, body);
  await applyEvent(ctx, queue.row.id, { type: 'pr_restart_requested', prNumber: body.pr.number }, ctx.now());
}

/** getSubmittedPullRequest: the record of the PR's latest submission, with why it is in its state. */
export async function getSubmittedPullRequest(ctx: AppContext, caller: Caller, body: PrRequest) {
  const queue = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  const e = await latestSubmission(ctx, queue.row.id, queue.state, body.pr.number);
  const judged = await latestJudgement(ctx, queue.row.id, queue.state, e);
  const despite =
    judged?.decision === 'ignored_quarantined' && (e.state === 'tests_passed' || e.state === 'merged');
  const { noBatch: _n, ...record } = enqueuedPrRecord(e);
  return {
    ...record,
    readiness: {
      hasImpactedTargets: e.impactedTargets !== null,
      requiresImpactedTargets: queue.state.settings.mode === 'parallel',
      doesBaseBranchMatch: e.baseBranch === queue.state.branch,
      gitHubMergeability: e.mergeability,
    },
    forceEnqueued: false,
    isCurrentlySubmittedToQueue: !isTerminal(e.state),
    stateReason: despite ? `${e.reason}; ${judged.reason}` : e.reason,
    ...(judged !== undefined ? { flakeProtection: judgementRecord(judged) } : {}),
    history: e.history.map((h) => ({ state: h.state, at: new Date(h.at).toISOString(), reason: h.reason })),
  };
}

/**
 * setImpactedTargets: the targets a PR head touches (parallel mode lanes); "ALL" depends on everything.
 * Kept per PR head, so targets uploaded before the PR is submitted (as merge-action does) apply when it is.
 */
export async function setImpactedTargets(
  ctx: AppContext,
  caller: Caller,
  body: {
    repo: RepoRef;
    targetBranch: string;
    pr: { number: number | string; sha: string };
    impactedTargets: string[] | 'ALL';
  },
): Promise<void> {
  const queue = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  const prNumber = Number(body.pr.number);
  const targets: ImpactedTargets =
    body.impactedTargets === 'ALL' ? 'ALL' : [...new Set(body.impactedTargets)];
  const headSha = body.pr.sha.toLowerCase();
  await saveImpactedTargets(ctx.db, {
    repo_id: queue.repoId,
    pr_number: prNumber,
    head_sha: headSha,
    targets: JSON.stringify(targets),
    updated_at: ctx.now(),
  });
  if (getPrRecord(queue.state, prNumber) === undefined) return;
  await applyEvent(
    ctx,
    queue.row.id,
    { type: 'impacted_targets_set', prNumber, headSha, targets },
    ctx.now(),
  );
}
