import {
  asideWalk,
  askToMerge,
  busyOrdered,
  type Ctx,
  canMerge,
  canStartRuns,
  findPr,
  findRun,
  isActive,
  isAside,
  pr,
  runList,
  setPrState,
  writableRun,
} from './context.ts';
import { depsOf, depsOfGroup, staleReason } from './graph.ts';
import { supersede } from './handlers-pr.ts';
import { createdCurrent } from './resolve.ts';
import { createRun } from './runs.ts';
import type { PrEntry, TestRun } from './types.ts';

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
  // Everything its proof holds ahead of it landed first (staleReason checks the order they landed in).
  const held = [...proof.dependsOn, ...proof.tested];
  if (held.slice(0, held.indexOf(next.number)).some((n) => findPr(s, n)?.state !== 'merged')) return false;
  // The tip the proof run's history leads to (its base plus our merges since): nothing else.
  askToMerge(ctx, next, false);
  return true;
}

function activeMainRuns(ctx: Ctx): TestRun[] {
  return runList(ctx).filter((r) => r.kind === 'main' && isActive(r));
}

function countActiveMainRuns(ctx: Ctx): number {
  let n = 0;
  for (const r of runList(ctx)) if (r.kind === 'main' && isActive(r)) n += 1;
  return n;
}

/**
 * Start test runs for pending PRs in queue order while `concurrency` allows.
 * In single mode a PR's dependencies are the PRs ahead of it that are not aside, so one walk of the
 * order keeps them (`ahead`) and whether one is pending, instead of finding them again for each PR.
 */
export function startRuns(ctx: Ctx): boolean {
  const { s } = ctx;
  if (!canStartRuns(s)) return false;
  let changed = false;
  let active = countActiveMainRuns(ctx);
  const size = batchSize(ctx, active);
  const single = s.settings.mode === 'single';
  if (single && active >= s.settings.concurrency && !urgentFirst(ctx)) return false;
  const ahead: number[] = [];
  // (Started here: a new run's PRs are not aside. Interrupting one changes a run: looked up again.)
  let aside = asideWalk(s);
  // Nothing here changes the order (starting, interrupting and restarting runs move no PR in it).
  const order = s.order;
  for (let i = 0; i < order.length; i += 1) {
    const n = order[i] as number;
    const e = pr(s, n);
    // (In single mode the walk stops at the first pending PR it does not start: see below.)
    const waits =
      e.state !== 'pending' || (!single && depsOf(s, n).some((d) => pr(s, d).state === 'pending'));
    let starts = !waits;
    if (starts && active >= s.settings.concurrency) {
      if (e.priorityValue !== 0) break;
      // Interrupt a run only for an urgent PR that starts now: one still filling its batch would
      // cancel a run, then the freed slot restarts it, for ever (found by the property test).
      if (formGroup(ctx, n, size) === null || !preempt(ctx, n)) starts = false;
      else {
        active = countActiveMainRuns(ctx);
        aside = asideWalk(s);
      }
    }
    const group = starts ? formGroup(ctx, n, size) : null;
    if (group !== null) {
      const run = createRun(ctx, {
        kind: 'main',
        tested: group,
        dependsOn: single ? ahead : depsOfGroup(s, group),
        parentRunId: null,
      });
      let upTo = i;
      for (const g of group) {
        setPrState(ctx, pr(s, g), 'testing', `testing in run ${run.id}`, run.id);
        const at = order.indexOf(g, i);
        if (at > upTo) upTo = at;
      }
      createdCurrent(ctx, run, upTo);
      active += 1;
      changed = true;
    }
    if (single) {
      // (Its entry was copied only if it started: preempt and formGroup write no pending PR's entry.)
      const after = group !== null ? pr(s, n) : e;
      if (!aside(after)) {
        ahead.push(n);
        // Every PR behind a pending one waits for it: nothing further back can start.
        if (after.state === 'pending') break;
      }
    }
  }
  return changed;
}

/**
 * Whether the walk of startRuns in single mode with every slot taken can start or interrupt anything:
 * it walks the busy PRs (none starts) as far as the first pending PR and stops there unless that PR is
 * urgent. The first PR of the order that is not busy is pending (the order holds only pending and busy
 * PRs); anything else, or none, answers true and the walk looks for itself.
 */
function urgentFirst(ctx: Ctx): boolean {
  const { s, busy } = ctx;
  const { order } = s;
  for (let i = 0; i < order.length; i += 1) {
    const n = order[i] as number;
    if (busy.has(n)) continue;
    const e = pr(s, n);
    return e.state !== 'pending' || e.priorityValue === 0;
  }
  return true;
}

/**
 * Target batch size: batchingMinSize, or with batchingMaxSize above it, the pending PRs shared among the
 * free slots (so a long queue is tested in fewer, larger batches), between the two.
 */
function batchSize(ctx: Ctx, active: number): number {
  const { batchingMinSize: min, batchingMaxSize: max = min, concurrency } = ctx.s.settings;
  if (!ctx.s.settings.batch || max <= min) return min;
  // The order holds only pending and busy PRs, and every busy PR is in it.
  const pending = ctx.s.order.length - ctx.busy.size;
  const free = Math.max(1, concurrency - active);
  return Math.min(max, Math.max(min, Math.ceil(pending / free)));
}

/**
 * The PRs tested together starting at n: n alone without batching (or with noBatch); otherwise the
 * next pending PRs up to the target size, started once batchingMinSize are there or once the oldest
 * waited long enough. PRs a bisection segment cleared (back in the line ahead of fresh PRs) join on top
 * of the target size: they are not known to be bad, so they add little risk (issue 26); a batchingMaxSize
 * the user set still bounds the whole batch.
 * A batch is a run of consecutive PRs: one that cannot join ends it, since a batch reaching past it
 * would test the PRs ahead of it on top of a PR behind them, a base they never merge onto.
 * In single mode no PR ahead of n is pending (startRuns starts n only then), so a PR joining the batch
 * waits on no pending PR outside it: only parallel mode looks.
 */
function formGroup(ctx: Ctx, n: number, size: number): number[] | null {
  const { s, now } = ctx;
  const first = pr(s, n);
  if (!s.settings.batch || first.noBatch) return [n];
  const group = [n];
  let fresh = first.cleared === true ? 0 : 1;
  const cap = s.settings.batchingMaxSize ?? Number.POSITIVE_INFINITY;
  const single = s.settings.mode === 'single';
  const { order } = s;
  for (let i = order.indexOf(n) + 1; i < order.length; i += 1) {
    const m = order[i] as number;
    const e = pr(s, m);
    if (isAside(s, e)) continue;
    const counts = e.cleared !== true;
    if ((counts && fresh >= size) || group.length >= cap) break;
    if (e.state !== 'pending' || e.noBatch) break;
    if (!single && depsOf(s, m).some((d) => pr(s, d).state === 'pending' && !group.includes(d))) break;
    group.push(m);
    if (counts) fresh += 1;
  }
  // PRs a segment cleared waited in a batch already: a group holding one starts at once.
  let oldest = Number.POSITIVE_INFINITY;
  for (const g of group) {
    const e = pr(s, g);
    oldest = Math.min(oldest, e.cleared === true ? Number.NEGATIVE_INFINITY : e.stateChangedAt);
  }
  const waited = now - oldest >= s.settings.batchingMaxWaitTimeMinutes * 60_000;
  return group.length >= s.settings.batchingMinSize || waited ? group : null;
}

/** Whether a busy PR the run tests waits on it or is proven by it. */
function heldByOwnPr(ctx: Ctx, run: TestRun): boolean {
  for (const n of run.tested) {
    const e = ctx.s.prs.get(n);
    if (e !== undefined && ctx.busy.has(n) && (e.runId === run.id || e.proofRunId === run.id)) return true;
  }
  return false;
}

/** The runs a busy PR of the order (`entries`) or a bisection refers to. */
function neededRuns(ctx: Ctx, entries: readonly PrEntry[]): Set<string> {
  const needed = new Set<string>();
  // (The PRs of a batch are next to each other: their run is added once.)
  let lastRun: string | null = null;
  for (const e of entries) {
    if (e.runId && e.runId !== lastRun) needed.add(e.runId);
    lastRun = e.runId;
    if (e.proofRunId) needed.add(e.proofRunId);
  }
  for (const b of ctx.s.bisections) for (const node of b.nodes) if (node.runId) needed.add(node.runId);
  return needed;
}

/** Urgent PRs interrupt: cancel the run furthest back in the queue that tests no urgent PR. */
function preempt(ctx: Ctx, urgent: number): boolean {
  const { s } = ctx;
  const position = (r: TestRun) => Math.max(...r.tested.map((t) => s.order.indexOf(t)));
  const at = s.order.indexOf(urgent);
  // Never a run ahead of the urgent PR: its PRs would be pending ahead of it, so it could not start,
  // and the freed slot would restart them, for ever (found by the property test).
  const victims = activeMainRuns(ctx)
    .filter((r) => r.tested.every((t) => pr(s, t).priorityValue !== 0 && s.order.indexOf(t) > at))
    .sort((a, b) => position(b) - position(a));
  const [victim] = victims;
  if (!victim) return false;
  supersede(ctx, victim.id, `interrupted by urgent PR #${urgent}; will be retested`);
  return true;
}

/** Delete test branches no PR or bisection needs any more (cancelling CI of runs that did not finish). */
export function cleanupRuns(ctx: Ctx): boolean {
  const { entries } = busyOrdered(ctx);
  // Every busy PR is in the order (mostly): a run one of its own PRs waits on or is proven by is needed.
  const allInOrder = entries.length === ctx.busy.size;
  let needed: Set<string> | undefined;
  let changed = false;
  const runs = runList(ctx);
  // (writableRun replaces the run it copies in place: the walk sees each run once.)
  for (let i = 0; i < runs.length; i += 1) {
    const found = runs[i] as TestRun;
    if (found.branchDeleted || (allInOrder && heldByOwnPr(ctx, found))) continue;
    needed ??= neededRuns(ctx, entries);
    if (needed.has(found.id)) continue;
    // No busy PR refers to it: its status decides no PR's place in the line.
    const run = writableRun(ctx, found, true);
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
