import {
  askToMerge,
  busyOrdered,
  type Ctx,
  canAdmit,
  insertInOrder,
  ordered,
  pr,
  setPrState,
} from './context.ts';
import { comparePriority, insertPosition, overlaps } from './graph.ts';
import { queueStateName } from './read.ts';
import { resolveRequired } from './runs.ts';
import type { Mode, PrEntry, QueueState } from './types.ts';

/**
 * Why a submitted PR is not ready to queue yet, or null when it is (mergequeue.md §1a): its base is the
 * queue's branch, the forge says it may merge, every required status passed on its current head, and
 * (parallel mode) impacted targets were uploaded for that head. A queue with no required statuses
 * admits nothing: without a required check no test run could prove anything (as bors and GitHub's
 * merge queue refuse to merge without one).
 */
export function notReadyReason(s: QueueState, e: PrEntry): string | null {
  if (e.baseBranch !== s.branch) return `its base branch is ${e.baseBranch}, not ${s.branch}`;
  const required = resolveRequired(s).statuses;
  if (required.length === 0) return noRequiredStatusesReason(s);
  if (e.mergeability !== 'mergeable') {
    return `waiting for the forge to report it mergeable (now ${e.mergeability}: reviews, conflicts)`;
  }
  const head = e.headSha.slice(0, 12);
  const outcome = (name: string) => e.headChecks?.find((c) => c.name === name)?.outcome ?? 'pending';
  const failed = required.filter((n) => outcome(n) === 'failed');
  if (failed.length > 0) {
    return `required checks failed on its head ${head}: ${failed.join(', ')}; fix them (or run them again) to queue it`;
  }
  const waiting = required.filter((n) => outcome(n) !== 'passed');
  if (waiting.length > 0)
    return `waiting for required checks to pass on its head ${head}: ${waiting.join(', ')}`;
  const hasTargets = e.impactedTargets !== null && e.impactedTargets.sha === e.headSha;
  if (s.settings.mode === 'parallel' && !hasTargets) {
    return `waiting for impacted targets of its head ${head} (parallel mode)`;
  }
  return null;
}

export function noRequiredStatusesReason(s: QueueState): string {
  return (
    `the queue for ${s.branch} has no required statuses, so no test could prove a PR safe to merge; ` +
    'set requiredStatuses with updateQueue, required_statuses in .mainline.yaml, or required checks in branch protection'
  );
}

export function isReady(s: QueueState, e: PrEntry): boolean {
  return notReadyReason(s, e) === null;
}

/**
 * directMergeMode always: a ready PR (its own required checks passed on its head) whose base is the
 * target's tip, with nothing queued in its lane and nothing merging, merges without a test branch: the
 * result is the tree its checks ran on.
 */
function canMergeDirectly(s: QueueState, e: PrEntry): boolean {
  if (s.settings.directMergeMode !== 'always' || s.merging !== null || e.baseSha !== s.targetHead)
    return false;
  for (const n of s.order) if (overlaps(s, pr(s, n), e)) return false;
  return true;
}

/** Admit ready not_ready PRs in priority order, or merge one directly. */
export function admitReady(ctx: Ctx): boolean {
  const { s } = ctx;
  if (!canAdmit(s)) return false;
  // comparePriority is a total order (seq is unique), so the index's order does not matter.
  const candidates = [...ctx.notReady]
    .map((n) => pr(s, n))
    .filter((e) => s.merging?.prNumber !== e.number && isReady(s, e))
    .sort(comparePriority);
  for (const e of candidates) {
    if (canMergeDirectly(s, e)) {
      // The tip the PR is based on: its own checks ran on exactly that history.
      askToMerge(ctx, e, true);
      continue;
    }
    insertInOrder(ctx, insertPosition(s, e, busyOrdered(ctx).end), e.number);
    setPrState(ctx, e, 'pending', 'admitted to the queue; waiting to be tested');
  }
  return candidates.length > 0;
}

/**
 * Keep each not_ready PR's reason saying what it waits for now. A pending PR of a queue that has lost
 * its required statuses goes back to not_ready (no run could prove it); runs already started keep
 * the statuses they were created with.
 */
export function explainWaiting(ctx: Ctx): boolean {
  const { s } = ctx;
  let changed = false;
  if (resolveRequired(s).statuses.length === 0) {
    for (const e of ordered(s).filter((o) => o.state === 'pending')) {
      setPrState(ctx, e, 'not_ready', noRequiredStatusesReason(s));
      changed = true;
    }
  }
  // In PR number order, as s.prs.values() lists them.
  for (const n of [...ctx.notReady].sort((a, b) => a - b)) {
    const e = pr(s, n);
    if (s.merging?.prNumber === e.number) continue;
    const reason = notReadyReason(s, e) ?? `ready; waiting while the queue is ${queueStateName(s)}`;
    if (reason === e.reason) continue;
    setPrState(ctx, e, 'not_ready', reason);
    changed = true;
  }
  return changed;
}

/** PRs whose testing is under way or done but not merged: a mode switch waits for them. */
export function hasInFlight(ctx: Ctx): boolean {
  return ctx.s.merging !== null || busyOrdered(ctx).entries.length > 0;
}

/** Change mode now; in parallel mode, queued PRs without targets for their head go back to not_ready. */
export function switchMode(ctx: Ctx, mode: Mode): void {
  ctx.s.settings.mode = mode;
  ctx.s.pendingMode = null;
  ctx.changes.push(0);
  for (const n of [...ctx.s.order]) {
    const e = pr(ctx.s, n);
    if (!isReady(ctx.s, e)) setPrState(ctx, e, 'not_ready', `switched to ${mode} mode; not ready for it yet`);
  }
}

/** switching_modes ends when nothing is in flight any more. */
export function completeModeSwitch(ctx: Ctx): boolean {
  if (ctx.s.pendingMode === null || hasInFlight(ctx)) return false;
  switchMode(ctx, ctx.s.pendingMode);
  return true;
}
