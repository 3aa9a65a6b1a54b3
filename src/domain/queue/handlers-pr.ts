import { notReadyReason } from './admission.ts';
import { abortBisection, requeueSegment } from './bisect.ts';
import {
  addPr,
  busyOrdered,
  type Ctx,
  findPr,
  findRun,
  isActive,
  isTerminal,
  nextId,
  setPrState,
  writablePr,
  writableRun,
} from './context.ts';
import { parsePriority } from './create.ts';
import type { CheckReport, QueueEvent } from './events.ts';
import { mergeChecks } from './runs.ts';
import type { PrEntry } from './types.ts';

type Ev<T extends QueueEvent['type']> = Extract<QueueEvent, { type: T }>;

/** A submission creates a not_ready entry; a PR already in the queue keeps its place. */
export function onSubmitted(ctx: Ctx, ev: Ev<'pr_submitted'>): void {
  const existing = findPr(ctx.s, ev.pr.number);
  if (existing && existing.state !== 'failed' && existing.state !== 'cancelled') {
    if (existing.headSha === ev.pr.headSha && !isTerminal(existing.state) && hasReports(ev.checks))
      headChecksOf(writablePr(ctx, existing), ev.checks);
    return;
  }
  const priority = parsePriority(ev.priority);
  const e: PrEntry = {
    ...ev.pr,
    id: nextId(ctx.s),
    priorityValue: priority.value,
    priorityName: priority.name,
    usedDefaultPriorityName: priority.usedDefault,
    noBatch: ev.noBatch ?? false,
    impactedTargets: existing?.impactedTargets?.sha === ev.pr.headSha ? existing.impactedTargets : null,
    state: 'not_ready',
    stateChangedAt: ctx.now,
    reason: '',
    history: [],
    submittedAt: ctx.now,
    seq: ctx.s.nextSeq,
    runId: null,
    proofRunId: null,
    headChecks: [],
  };
  headChecksOf(e, ev.checks);
  addPr(ctx, e);
  setPrState(ctx, e, 'not_ready', notReadyReason(ctx.s, e) ?? 'submitted; ready to queue');
}

/** Record checks reported on the PR's current head (latest result per name wins). */
function headChecksOf(e: PrEntry, reports: readonly CheckReport[] | undefined): void {
  if (!hasReports(reports)) return;
  e.headChecks ??= [];
  mergeChecks(e.headChecks, reports);
}

function hasReports(reports: readonly CheckReport[] | undefined): reports is readonly CheckReport[] {
  return reports !== undefined && reports.length > 0;
}

/** CI results on a PR's own head count for its readiness; results for any other commit never do. */
export function onHeadChecks(ctx: Ctx, ev: Ev<'pr_checks_reported'>): void {
  const e = findPr(ctx.s, ev.prNumber);
  if (!e || isTerminal(e.state) || e.headSha !== ev.headSha || !hasReports(ev.checks)) return;
  headChecksOf(writablePr(ctx, e), ev.checks);
}

/** Mergeability or base changes; a queued PR retargeted to another branch leaves the queue. */
export function onReadinessChanged(ctx: Ctx, ev: Ev<'pr_readiness_changed'>): void {
  const found = findPr(ctx.s, ev.prNumber);
  if (!found || isTerminal(found.state)) return;
  const e = writablePr(ctx, found);
  if (ev.mergeability !== undefined) e.mergeability = ev.mergeability;
  if (ev.baseSha !== undefined) e.baseSha = ev.baseSha;
  if (ev.baseBranch !== undefined) e.baseBranch = ev.baseBranch;
  if (e.baseBranch !== ctx.s.branch && e.state !== 'not_ready') {
    setPrState(ctx, e, 'cancelled', `base branch changed to ${e.baseBranch}`);
  }
}

/** New commits on a queued PR cancel it: what was tested is no longer what would merge. */
export function onHeadUpdated(ctx: Ctx, ev: Ev<'pr_head_updated'>): void {
  const found = findPr(ctx.s, ev.prNumber);
  if (!found || found.headSha === ev.headSha) return;
  const e = writablePr(ctx, found);
  if (!isTerminal(e.state)) {
    const reason = `new commits were pushed while queued (${e.headSha} → ${ev.headSha}); submit it again`;
    setPrState(ctx, e, 'cancelled', reason);
  }
  e.headSha = ev.headSha;
  e.headChecks = [];
}

export function onCancelled(ctx: Ctx, ev: Ev<'pr_cancelled'>): void {
  const e = findPr(ctx.s, ev.prNumber);
  if (e && !isTerminal(e.state)) setPrState(ctx, e, 'cancelled', ev.reason);
}

/** Targets only count for the head they were computed on. */
export function onImpactedTargets(ctx: Ctx, ev: Ev<'impacted_targets_set'>): void {
  const found = findPr(ctx.s, ev.prNumber);
  if (!found || found.headSha !== ev.headSha || isTerminal(found.state)) return;
  const targets = ev.targets === 'ALL' ? 'ALL' : [...ev.targets];
  writablePr(ctx, found).impactedTargets = { sha: ev.headSha, targets };
}

/** restartTestsOnPullRequest: drop the PR's current run; it and its group are tested again. */
export function onRestartRequested(ctx: Ctx, ev: Ev<'pr_restart_requested'>): void {
  const e = findPr(ctx.s, ev.prNumber);
  const run = findRun(ctx.s, e?.runId ?? e?.proofRunId ?? null);
  if (!e || !run || !ctx.s.order.includes(e.number)) return;
  supersede(ctx, run.id, `tests restarted on request for PR #${e.number}`);
}

/** Cancel a run (if still in flight) and send every PR waiting on it back to pending. */
export function supersede(ctx: Ctx, runId: string, reason: string): void {
  const found = findRun(ctx.s, runId);
  if (!found) return;
  abortBisection(ctx, runId);
  // A segment under test goes back aside to its bisection, to be tested again.
  const segment = requeueSegment(ctx, runId, reason);
  if (!segment) {
    // Only busy PRs refer to a run (setPrState clears runId and proofRunId in every other state).
    for (const e of busyOrdered(ctx).entries) {
      if (e.runId === runId || e.proofRunId === runId) setPrState(ctx, e, 'pending', reason);
    }
  }
  // Cancelled once its PRs have left it (none of them reads the run's status), so that while they
  // move, each one's run is still as it was when the line was found (context.ts: lineEpoch). Then no
  // PR in the order refers to it any more: its status decides no PR's place in the line, and the runs
  // found current stay so (context.ts: writableRun).
  if (isActive(found)) {
    const run = writableRun(ctx, found, !segment);
    run.status = 'cancelled';
    run.failure = { kind: 'superseded', reason, conflictPr: null };
  }
}
