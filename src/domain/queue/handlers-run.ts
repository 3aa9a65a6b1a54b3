import { abortBisection, segmentFinished } from './bisect.ts';
import { type Ctx, findRun, isActive, isAside, pr, runList, setPrState, writableRun } from './context.ts';
import type { QueueEvent } from './events.ts';
import { judgeChecks, mergeChecks, missingChecks } from './runs.ts';
import type { RunFailure, TestRun } from './types.ts';

type Ev<T extends QueueEvent['type']> = Extract<QueueEvent, { type: T }>;

export function onBranchBuilt(ctx: Ctx, ev: Ev<'test_branch_built'>): void {
  const found = findRun(ctx.s, ev.runId);
  if (found?.status !== 'building') return;
  const run = writableRun(ctx, found);
  run.status = 'in_progress';
  run.testBranchSha = ev.sha;
}

export function onBranchFailed(ctx: Ctx, ev: Ev<'test_branch_failed'>): void {
  const run = findRun(ctx.s, ev.runId);
  if (!run || !isActive(run)) return;
  const kind = ev.conflictPr === null ? 'build_error' : 'conflict';
  const reason =
    ev.conflictPr === null
      ? `could not build the test branch: ${ev.reason}`
      : `merge conflict merging PR #${ev.conflictPr} into the test branch: ${ev.reason}`;
  finishRun(ctx, run, { kind, reason, conflictPr: ev.conflictPr });
}

export function onCiReported(ctx: Ctx, ev: Ev<'ci_reported'>): void {
  const found = findRun(ctx.s, ev.runId);
  if (!found || !isActive(found)) return;
  const run = writableRun(ctx, found);
  mergeChecks(run.checks, ev.checks);
  const verdict = judgeChecks(run, ev.verdict);
  if (verdict !== null) finishRun(ctx, run, verdict);
}

/** Runs past testingTimeoutMinutes are cancelled and count as failures of their PRs. */
export function expireRuns(ctx: Ctx): boolean {
  const late = runList(ctx).filter((r) => isActive(r) && r.deadline <= ctx.now);
  for (const run of late) {
    const minutes = Math.round((run.deadline - run.createdAt) / 60_000);
    const missing = run.status === 'building' ? ['the test branch'] : missingChecks(run);
    const waiting = missing.length > 0 ? missing.join(', ') : 'required statuses';
    const reason = `testing timed out after ${minutes} minutes waiting for ${waiting}`;
    finishRun(ctx, run, { kind: 'timed_out', reason, conflictPr: null });
  }
  return late.length > 0;
}

/** Record a run's outcome and move the PRs it was testing. */
export function finishRun(ctx: Ctx, finished: TestRun, result: 'succeeded' | RunFailure): void {
  const run = writableRun(ctx, finished);
  run.status = result === 'succeeded' ? 'succeeded' : result.kind === 'timed_out' ? 'cancelled' : 'failed';
  run.failure = result === 'succeeded' ? null : result;
  // A segment of a bisection proves nothing: its result only clears or ejects its PRs (bisect.ts).
  if (run.kind === 'bisection') {
    segmentFinished(ctx, run, result);
    return;
  }
  const members = run.tested
    .map((n) => pr(ctx.s, n))
    .filter((e) => e.runId === run.id && e.state === 'testing');
  for (const e of members) {
    if (result === 'succeeded') setPrState(ctx, e, 'tests_passed', `tests passed in run ${run.id}`, run.id);
    else setPrState(ctx, e, 'pending_failure', result.reason, run.id);
  }
  if (result === 'succeeded' && ctx.s.settings.canOptimisticallyMerge) clearAhead(ctx, run);
}

/** Optimistic merge: a passing run also passes every unmerged PR ahead of it that it contains. */
function clearAhead(ctx: Ctx, run: TestRun): void {
  for (const n of run.dependsOn) {
    const e = pr(ctx.s, n);
    if (!ctx.s.order.includes(n) || !['pending', 'testing', 'pending_failure'].includes(e.state)) continue;
    if (isAside(ctx.s, e)) continue;
    const own = findRun(ctx.s, e.runId);
    if (own) {
      abortBisection(ctx, own.id);
      if (isActive(own))
        writableRun(ctx, own).failure = {
          kind: 'superseded',
          reason: `cleared by run ${run.id}`,
          conflictPr: null,
        };
    }
    const reason = `cleared by passing run ${run.id} of PR #${run.tested[0]} (optimistic merge)`;
    setPrState(ctx, e, 'tests_passed', reason, run.id);
  }
}
