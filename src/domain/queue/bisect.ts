import {
  busyOrdered,
  type Ctx,
  canStartRuns,
  findRun,
  isActive,
  isAside,
  moveInOrder,
  pr,
  runList,
  setPrState,
} from './context.ts';
import { depsOfGroup } from './graph.ts';
import { createRun, resolveRequired } from './runs.ts';
import type { Bisection, BisectNode, PrEntry, TestRun } from './types.ts';

/**
 * Bisection of a failed batch on the side (mergequeue.md §5). The batch leaves the line at once: its PRs
 * wait aside (testing, on the failed run), so the runs behind are rebuilt without them. Each segment is
 * tested in the line, on top of what is being tested there (the base it would merge onto): a passing
 * segment is proven and merges in line order; a failing one goes aside again and is halved, until
 * single PRs are found. With bisection_skip_redundant_tests the right half waits for the left: if the
 * left passes, the right is known to fail without a run.
 */
export function startBisection(ctx: Ctx, failed: TestRun, members: number[]): void {
  const root: BisectNode = {
    prs: members,
    parent: null,
    status: 'failed',
    runId: failed.id,
    inferred: false,
    split: false,
  };
  ctx.s.bisections.push({ parentRunId: failed.id, nodes: [root] });
  for (const n of members) setAside(ctx, pr(ctx.s, n), failed.id);
}

function setAside(ctx: Ctx, e: PrEntry, rootId: string): void {
  setPrState(ctx, e, 'testing', `bisecting failed batch (run ${rootId})`, rootId);
}

/** Stop bisecting a batch run: its PRs still aside go back to the line; segments under test carry on. */
export function abortBisection(ctx: Ctx, parentRunId: string): void {
  const before = ctx.s.bisections.length;
  ctx.s.bisections = ctx.s.bisections.filter((b) => b.parentRunId !== parentRunId);
  if (ctx.s.bisections.length === before) return;
  for (const e of busyOrdered(ctx).entries) {
    if (e.state === 'testing' && e.runId === parentRunId) {
      setPrState(ctx, e, 'pending', `bisection of batch run ${parentRunId} stopped; retesting`);
    }
  }
}

export function bisectionOf(ctx: Ctx, parentRunId: string): Bisection | undefined {
  return ctx.s.bisections.find((b) => b.parentRunId === parentRunId);
}

/** The bisection and node whose segment is tested by this run (while the node is running). */
export function segmentOf(ctx: Ctx, runId: string): { b: Bisection; node: BisectNode } | undefined {
  for (const b of ctx.s.bisections) {
    const node = b.nodes.find((n) => n.runId === runId && n.status === 'running');
    if (node) return { b, node };
  }
  return undefined;
}

/** A segment's run went stale before its result counted: its PRs go aside again to be retested. */
export function requeueSegment(ctx: Ctx, runId: string, reason: string): boolean {
  const found = segmentOf(ctx, runId);
  if (!found) return false;
  found.node.status = 'waiting';
  found.node.runId = null;
  found.node.retry = true;
  for (const e of busyOrdered(ctx).entries) {
    if (e.runId === runId || e.proofRunId === runId) {
      setPrState(
        ctx,
        e,
        'testing',
        `${reason}; bisecting failed batch (run ${found.b.parentRunId})`,
        found.b.parentRunId,
      );
    }
  }
  return true;
}

/** A segment failed (settled like any failed run): a single PR is the culprit, more are halved. */
export function segmentFailed(ctx: Ctx, run: TestRun, members: PrEntry[]): boolean {
  const found = segmentOf(ctx, run.id);
  if (!found) return false;
  const { b, node } = found;
  node.status = 'failed';
  const reason = run.failure?.reason ?? 'tests failed';
  for (const e of members) {
    if (node.prs.length === 1) {
      setPrState(ctx, e, 'failed', `bisection of batch run ${b.parentRunId} found it failing: ${reason}`);
    } else {
      setAside(ctx, e, b.parentRunId);
    }
  }
  return true;
}

/** Record a result on a node of a bisection started before segments were tested in the line. */
export function onBisectionRunResult(ctx: Ctx, run: TestRun): void {
  for (const b of ctx.s.bisections) {
    const node = b.nodes.find((n) => n.runId === run.id && n.status === 'running');
    if (node) node.status = run.status === 'succeeded' ? 'passed' : 'failed';
  }
}

/**
 * Start the waiting segments of every bisection. The engine calls it once everything else settled (stale
 * runs restarted, free slots filled), so a segment lands behind what the line really tests.
 */
export function startSegments(ctx: Ctx): boolean {
  let changed = false;
  for (const b of ctx.s.bisections) changed = startNodes(ctx, b, false) || changed;
  return changed;
}

/** PRs of failed batches not settled yet (aside, or tested in a segment). */
function bisecting(ctx: Ctx): number {
  let n = 0;
  for (const b of ctx.s.bisections) {
    for (const x of b.nodes[0]?.prs ?? []) if (pr(ctx.s, x).state === 'testing') n += 1;
  }
  return n;
}

/**
 * Start the segments whose run went stale (a run ahead failed), before the runs that restart with them,
 * once more PRs wait in bisections than twice what the line tests at once (2 × concurrency ×
 * batchingMinSize): they
 * land on the proven part of the line, so failures ahead of them cannot starve the bisections.
 */
export function restartSegments(ctx: Ctx): boolean {
  if (bisecting(ctx) <= 2 * ctx.s.settings.concurrency * ctx.s.settings.batchingMinSize) return false;
  let changed = false;
  for (const b of ctx.s.bisections) changed = startNodes(ctx, b, true) || changed;
  return changed;
}

/** Settle nodes, split, infer and finish; returns whether anything changed. */
export function advanceBisections(ctx: Ctx): boolean {
  let changed = false;
  for (const b of [...ctx.s.bisections]) {
    if (!coherent(ctx, b)) {
      abortBisection(ctx, b.parentRunId);
      changed = true;
      continue;
    }
    changed = settleRunning(ctx, b) || changed;
    changed = splitFailed(ctx, b) || changed;
    changed = unblock(b) || changed;
    changed = ejectCulprits(ctx, b) || changed;
    const settled = (n: BisectNode) =>
      n.status === 'passed' || (n.status === 'failed' && (n.split || n.prs.length < 2));
    if (b.nodes.every(settled)) {
      abortBisection(ctx, b.parentRunId);
      changed = true;
    }
  }
  return changed;
}

/**
 * Whether the bisection can go on: every PR of a node not yet under test waits aside on it, and every
 * running node's PRs are on its run (or proven). Anything else (a PR cancelled, a segment cleared or
 * restarted from outside, a state saved by an older engine) stops it, and its PRs are retested in line.
 */
function coherent(ctx: Ctx, b: Bisection): boolean {
  const { s } = ctx;
  const asideHere = (n: number) => {
    const e = s.prs.get(n);
    return e !== undefined && isAside(s, e) && e.runId === b.parentRunId;
  };
  return b.nodes.every((node, i) => {
    if (i === 0) return true;
    if (node.status === 'waiting' || node.status === 'blocked') return node.prs.every(asideHere);
    if (node.status === 'failed' && !node.split && node.prs.length > 1) return node.prs.every(asideHere);
    if (node.status !== 'running') return true;
    if (node.runId === null || findRun(s, node.runId) === undefined) return false;
    return node.prs.every((n) => {
      const e = s.prs.get(n);
      if (e === undefined) return false;
      if (e.runId === node.runId || e.proofRunId === node.runId) return true;
      return e.state === 'tests_passed' || e.state === 'merged';
    });
  });
}

/** A running segment passed once all its PRs are proven (by its run, or cleared by a run behind). */
function settleRunning(ctx: Ctx, b: Bisection): boolean {
  let changed = false;
  for (const node of b.nodes) {
    if (node.status !== 'running') continue;
    const proven = node.prs.every((n) => ['tests_passed', 'merged'].includes(pr(ctx.s, n).state));
    if (proven) {
      node.status = 'passed';
      changed = true;
    }
  }
  return changed;
}

function splitFailed(ctx: Ctx, b: Bisection): boolean {
  const skip = ctx.s.settings.optimizationMode === 'bisection_skip_redundant_tests';
  let changed = false;
  b.nodes.forEach((node, i) => {
    if (node.status !== 'failed' || node.split || node.prs.length < 2) return;
    node.split = true;
    const mid = Math.ceil(node.prs.length / 2);
    const half = (prs: number[], status: BisectNode['status']): BisectNode => ({
      prs,
      parent: i,
      status,
      runId: null,
      inferred: false,
      split: false,
    });
    b.nodes.push(
      half(node.prs.slice(0, mid), 'waiting'),
      half(node.prs.slice(mid), skip ? 'blocked' : 'waiting'),
    );
    changed = true;
  });
  return changed;
}

/** A blocked right half: known to fail if its left sibling passed, else it must be tested. */
function unblock(b: Bisection): boolean {
  let changed = false;
  b.nodes.forEach((node, i) => {
    const left = b.nodes[i - 1];
    if (node.status !== 'blocked' || !left || left.parent !== node.parent) return;
    if (left.status === 'passed') {
      node.status = 'failed';
      node.inferred = true;
      changed = true;
    } else if (left.status === 'failed') {
      node.status = 'waiting';
      changed = true;
    }
  });
  return changed;
}

/** A single PR inferred to fail (its sibling passed) is the culprit: it leaves the queue now. */
function ejectCulprits(ctx: Ctx, b: Bisection): boolean {
  let changed = false;
  for (const node of b.nodes) {
    const [only] = node.prs;
    if (node.status !== 'failed' || node.prs.length !== 1 || only === undefined) continue;
    const e = pr(ctx.s, only);
    if (!isAside(ctx.s, e) || e.runId !== b.parentRunId) continue;
    const why = node.inferred ? 'inferred from the other half passing' : 'it failed alone';
    setPrState(ctx, e, 'failed', `bisection of batch run ${b.parentRunId} found it failing: ${why}`);
    changed = true;
  }
  return changed;
}

/** Start waiting segments at the end of what the line is testing, on top of it (the base they merge onto). */
function startNodes(ctx: Ctx, b: Bisection, retriesOnly: boolean): boolean {
  const { s } = ctx;
  // A run without required statuses could prove nothing: the bisection waits until the queue has some.
  if (!canStartRuns(s) || resolveRequired(s).statuses.length === 0) return false;
  let changed = false;
  for (const node of b.nodes) {
    const running = runList(ctx).filter((r) => r.kind === 'bisection' && isActive(r)).length;
    if (node.status !== 'waiting' || running >= s.settings.bisectionConcurrency) continue;
    if (retriesOnly && node.retry !== true) continue;
    // Behind the last PR of the line that is not pending. The order holds only pending and busy PRs, all
    // busy ones ahead of busyOrdered's end, so the walk back starts there (the order without the
    // segment's PRs only moves PRs forward).
    const { end } = busyOrdered(ctx);
    moveInOrder(ctx, node.prs, (rest) => {
      for (let i = Math.min(end, rest.length) - 1; i >= 0; i -= 1) {
        const e = pr(s, rest[i] as number);
        if (e.state !== 'pending' && !isAside(s, e)) return i + 1;
      }
      return 0;
    });
    const run = createRun(ctx, {
      kind: 'bisection',
      tested: node.prs,
      dependsOn: depsOfGroup(s, node.prs),
      parentRunId: b.parentRunId,
    });
    for (const n of node.prs) {
      setPrState(
        ctx,
        pr(s, n),
        'testing',
        `testing a segment of failed batch run ${b.parentRunId} in run ${run.id}`,
        run.id,
      );
    }
    node.status = 'running';
    node.runId = run.id;
    changed = true;
  }
  return changed;
}
