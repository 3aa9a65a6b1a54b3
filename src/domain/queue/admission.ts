import { type Ctx, canAdmit, ordered, pr, setPrState } from './context.ts';
import { comparePriority, insertPosition, overlaps } from './graph.ts';
import type { Mode, PrEntry, QueueState } from './types.ts';

/** Readiness (mergequeue.md §1a): base matches, the forge says mergeable, targets for the head (parallel). */
export function isReady(s: QueueState, e: PrEntry): boolean {
  const hasTargets = e.impactedTargets !== null && e.impactedTargets.sha === e.headSha;
  return (
    e.baseBranch === s.branch &&
    e.mergeability === 'mergeable' &&
    (s.settings.mode === 'single' || hasTargets)
  );
}

/** directMergeMode always: up to date with the target and nothing queued in its lane. */
function canMergeDirectly(s: QueueState, e: PrEntry): boolean {
  if (s.settings.directMergeMode !== 'always' || s.merging !== null || e.baseSha !== s.targetHead)
    return false;
  return ordered(s).every((o) => !overlaps(s, o, e));
}

/** Admit ready not_ready PRs in priority order, or merge one directly. */
export function admitReady(ctx: Ctx): boolean {
  const { s } = ctx;
  if (!canAdmit(s)) return false;
  const candidates = Object.values(s.prs)
    .filter((e) => e.state === 'not_ready' && s.merging?.prNumber !== e.number && isReady(s, e))
    .sort(comparePriority);
  for (const e of candidates) {
    if (canMergeDirectly(s, e)) {
      s.merging = { prNumber: e.number, direct: true };
      const method = s.settings.mergeMethod;
      ctx.actions.push({
        type: 'merge_pr',
        prNumber: e.number,
        method,
        expectedHeadSha: e.headSha,
        direct: true,
      });
      continue;
    }
    s.order.splice(insertPosition(s, e), 0, e.number);
    setPrState(ctx, e, 'pending', 'admitted to the queue; waiting to be tested');
  }
  return candidates.length > 0;
}

/** PRs whose testing is under way or done but not merged: a mode switch waits for them. */
export function hasInFlight(s: QueueState): boolean {
  const busy = ['testing', 'tests_passed', 'pending_failure'];
  return s.merging !== null || ordered(s).some((e) => busy.includes(e.state));
}

/** Change mode now; in parallel mode, queued PRs without targets for their head go back to not_ready. */
export function switchMode(ctx: Ctx, mode: Mode): void {
  ctx.s.settings.mode = mode;
  ctx.s.pendingMode = null;
  for (const n of [...ctx.s.order]) {
    const e = pr(ctx.s, n);
    if (!isReady(ctx.s, e)) setPrState(ctx, e, 'not_ready', `switched to ${mode} mode; not ready for it yet`);
  }
}

/** switching_modes ends when nothing is in flight any more. */
export function completeModeSwitch(ctx: Ctx): boolean {
  if (ctx.s.pendingMode === null || hasInFlight(ctx.s)) return false;
  switchMode(ctx, ctx.s.pendingMode);
  return true;
}
