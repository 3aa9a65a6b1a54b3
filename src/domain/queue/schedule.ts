import {
  busyOrdered,
  type Ctx,
  canMerge,
  canStartRuns,
  findRun,
  isActive,
  pr,
  setPrState,
  writableRun,
} from './context.ts';
import { depsOf, depsOfGroup, staleReason } from './graph.ts';
import { supersede } from './handlers-pr.ts';
import { createRun } from './runs.ts';
import type { QueueState, TestRun } from './types.ts';

/** Ask to merge the first passed PR whose dependencies have all merged (one merge at a time). */
export function mergeNext(ctx: Ctx): boolean {
  const { s } = ctx;
  if (s.merging !== null || !canMerge(s)) return false;
  const next = busyOrdered(ctx).entries.find(
    (e) => e.state === 'tests_passed' && depsOf(s, e.number).length === 0,
  );
  const proof = findRun(s, next?.proofRunId ?? null);
  // Invariant G (statemachine.md): merge only what a passing run tested on the current target history.
  if (!next || !proof || staleReason(s, proof) !== null) return false;
  s.merging = { prNumber: next.number, direct: false };
  const method = s.settings.mergeMethod;
  ctx.actions.push({
    type: 'merge_pr',
    prNumber: next.number,
    method,
    expectedHeadSha: next.headSha,
    // The tip the proof run's history leads to (its base plus our merges since): nothing else.
    expectedTargetSha: s.targetHead,
    direct: false,
  });
  return true;
}

function activeMainRuns(s: QueueState): TestRun[] {
  return Object.values(s.runs).filter((r) => r.kind === 'main' && isActive(r));
}

/** Start test runs for pending PRs in queue order while `concurrency` allows. */
export function startRuns(ctx: Ctx): boolean {
  const { s } = ctx;
  if (!canStartRuns(s)) return false;
  let changed = false;
  let active = activeMainRuns(s).length;
  for (const n of [...s.order]) {
    const e = pr(s, n);
    if (e.state !== 'pending' || depsOf(s, n).some((d) => pr(s, d).state === 'pending')) continue;
    if (active >= s.settings.concurrency) {
      if (e.priorityValue !== 0) break;
      // Interrupt a run only for an urgent PR that starts now: one still filling its batch would
      // cancel a run, then the freed slot restarts it, for ever (found by the property test).
      if (formGroup(ctx, n) === null || !preempt(ctx, n)) continue;
      active = activeMainRuns(s).length;
    }
    const group = formGroup(ctx, n);
    if (group === null) continue;
    const run = createRun(ctx, {
      kind: 'main',
      tested: group,
      dependsOn: depsOfGroup(s, group),
      parentRunId: null,
    });
    for (const g of group) setPrState(ctx, pr(s, g), 'testing', `testing in run ${run.id}`, run.id);
    active += 1;
    changed = true;
  }
  return changed;
}

/**
 * The PRs tested together starting at n: n alone without batching (or with noBatch); otherwise the
 * next pending PRs up to batchingMinSize, started once full or once the oldest waited long enough.
 * A batch is a run of consecutive PRs: one that cannot join ends it, since a batch reaching past it
 * would test the PRs ahead of it on top of a PR behind them, a base they never merge onto.
 */
function formGroup(ctx: Ctx, n: number): number[] | null {
  const { s, now } = ctx;
  const first = pr(s, n);
  if (!s.settings.batch || first.noBatch) return [n];
  const group = [n];
  for (const m of s.order.slice(s.order.indexOf(n) + 1)) {
    if (group.length >= s.settings.batchingMinSize) break;
    const e = pr(s, m);
    if (e.state !== 'pending' || e.noBatch) break;
    if (depsOf(s, m).some((d) => pr(s, d).state === 'pending' && !group.includes(d))) break;
    group.push(m);
  }
  const oldest = Math.min(...group.map((g) => pr(s, g).stateChangedAt));
  const waited = now - oldest >= s.settings.batchingMaxWaitTimeMinutes * 60_000;
  return group.length >= s.settings.batchingMinSize || waited ? group : null;
}

/** Urgent PRs interrupt: cancel the run furthest back in the queue that tests no urgent PR. */
function preempt(ctx: Ctx, urgent: number): boolean {
  const { s } = ctx;
  const position = (r: TestRun) => Math.max(...r.tested.map((t) => s.order.indexOf(t)));
  const victims = activeMainRuns(s)
    .filter((r) => r.tested.every((t) => pr(s, t).priorityValue !== 0))
    .sort((a, b) => position(b) - position(a));
  const [victim] = victims;
  if (!victim) return false;
  supersede(ctx, victim.id, `interrupted by urgent PR #${urgent}; will be retested`);
  return true;
}

/** Delete test branches no PR or bisection needs any more (cancelling CI of runs that did not finish). */
export function cleanupRuns(ctx: Ctx): boolean {
  const { s } = ctx;
  const needed = new Set<string>();
  for (const e of busyOrdered(ctx).entries) {
    if (e.runId) needed.add(e.runId);
    if (e.proofRunId) needed.add(e.proofRunId);
  }
  for (const b of s.bisections) for (const node of b.nodes) if (node.runId) needed.add(node.runId);
  let changed = false;
  for (const found of Object.values(s.runs)) {
    if (found.branchDeleted || needed.has(found.id)) continue;
    const run = writableRun(ctx, found);
    if (isActive(run)) {
      run.status = 'cancelled';
      run.failure ??= { kind: 'superseded', reason: 'no longer needed', conflictPr: null };
    }
    run.branchDeleted = true;
    const cancelCi = run.status === 'cancelled';
    ctx.actions.push({ type: 'delete_test_branch', runId: run.id, testBranch: run.testBranch, cancelCi });
    changed = true;
  }
  return changed;
}
