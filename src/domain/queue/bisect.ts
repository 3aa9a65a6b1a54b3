import {
  busyOrdered,
  type Ctx,
  canStartRuns,
  findRun,
  isActive,
  isAside,
  isTerminal,
  moveInOrder,
  pr,
  runList,
  setPrState,
  writablePr,
} from './context.ts';
import { createRun, resolveRequired } from './runs.ts';
import type { Bisection, BisectNode, PrEntry, RunFailure, TestRun } from './types.ts';

/**
 * Bisection of a failed batch on the side (mergequeue.md §5; issue 26). The batch leaves the line at
 * once: its PRs wait aside (testing, on the failed run), so the runs behind are rebuilt without them.
 * Each segment runs in the bisection pool on the target branch as it is (its base is merged history,
 * dependsOn is empty) plus its own PRs, and its PRs stay aside meanwhile: no run is ever built on a
 * segment, so a segment never restarts the line and the line never restarts it. A segment run is
 * evidence for ejection only and proves nothing: a passing segment merges nothing, its PRs are cleared
 * and go back to the line behind every PR under test or waiting to merge (ahead of fresh PRs), to merge
 * through a passing main run like any PR; a failing one is conclusive (nothing but merged history is
 * under it): a single PR is ejected, more are halved. The right half waits for the left: with
 * bisection_skip_redundant_tests, if the left passes the right is known to fail without a run; otherwise
 * it is then tested on top of the left half's PRs (still off the line, still proving nothing).
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

/**
 * Stop bisecting a batch run: its PRs still aside (waiting, or under test in a segment) go back to the
 * line; the segment runs, no longer needed, are cancelled by cleanupRuns.
 */
export function abortBisection(ctx: Ctx, parentRunId: string): void {
  const b = bisectionOf(ctx, parentRunId);
  if (b === undefined) return;
  ctx.s.bisections = ctx.s.bisections.filter((x) => x !== b);
  const runs = new Set<string>([parentRunId]);
  for (const node of b.nodes) if (node.status === 'running' && node.runId !== null) runs.add(node.runId);
  for (const e of busyOrdered(ctx).entries) {
    if (e.state === 'testing' && e.runId !== null && runs.has(e.runId)) {
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

/** A segment's run was stopped (the target moved outside the queue, a restart): it waits to run again. */
export function requeueSegment(ctx: Ctx, runId: string, reason: string): boolean {
  const found = segmentOf(ctx, runId);
  if (!found) return false;
  found.node.status = 'waiting';
  found.node.runId = null;
  for (const e of busyOrdered(ctx).entries) {
    if (e.runId === runId) {
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

/**
 * A segment run reported (handlers-run.ts: finishRun). Passed: its PRs are cleared and go back to the
 * line (nothing merges on a segment run). Failed: conclusive, its base being merged history (and, with
 * optimizationMode off, halves that passed on it): a single PR is ejected, more go aside again to be
 * halved; a merge conflict ejects the conflicting PR and sends the rest of the batch back to the line.
 */
export function segmentFinished(ctx: Ctx, run: TestRun, result: 'succeeded' | RunFailure): void {
  const found = segmentOf(ctx, run.id);
  if (!found) return;
  const { b, node } = found;
  const members: PrEntry[] = [];
  for (const n of node.prs) {
    const e = pr(ctx.s, n);
    if (e.state === 'testing' && e.runId === run.id) members.push(e);
  }
  // A PR left the segment meanwhile, or a segment tested in the line by an older engine: advanceBisections
  // finds the bisection incoherent and stops it.
  if (members.length !== node.prs.length || !offLine(run, node)) return;
  if (result === 'succeeded') {
    node.status = 'passed';
    clearSegment(ctx, b, run, members);
    return;
  }
  if (result.conflictPr !== null) {
    for (const e of members) {
      if (e.number === result.conflictPr) setPrState(ctx, e, 'failed', result.reason);
      else setPrState(ctx, e, 'pending', `retesting without PR #${result.conflictPr} (merge conflict)`);
    }
    abortBisection(ctx, b.parentRunId);
    return;
  }
  node.status = 'failed';
  for (const e of members) {
    if (node.prs.length === 1) {
      const on =
        run.dependsOn.length === 0 ? '' : ` on top of ${run.dependsOn.map((n) => `#${n}`).join(', ')}`;
      const why = `it failed alone on ${ctx.s.branch}${on} in run ${run.id}: ${result.reason}`;
      setPrState(ctx, e, 'failed', `bisection of batch run ${b.parentRunId} found it failing: ${why}`);
    } else {
      setAside(ctx, e, b.parentRunId);
    }
  }
}

/** Whether a segment's run is one of this engine's: tested off the line, on the PRs its node allows. */
function offLine(run: TestRun, node: BisectNode): boolean {
  if (run.kind !== 'bisection') return false;
  for (const n of run.dependsOn) if (!(node.on ?? []).includes(n)) return false;
  return true;
}

/**
 * A passing segment's PRs go back to the line, cleared: behind the last PR under test or waiting to
 * merge (so no branch under test changes) and behind the PRs cleared before them, ahead of fresh PRs.
 */
function clearSegment(ctx: Ctx, b: Bisection, run: TestRun, members: readonly PrEntry[]): void {
  const { s } = ctx;
  moveInOrder(
    ctx,
    members.map((e) => e.number),
    (rest) => {
      let at = 0;
      for (let i = 0; i < rest.length; i += 1) {
        const e = pr(s, rest[i] as number);
        if (e.state !== 'pending' && !isAside(s, e)) at = i + 1;
      }
      while (at < rest.length && pr(s, rest[at] as number).cleared === true) at += 1;
      return at;
    },
  );
  const reason = `cleared by bisection run ${run.id} of failed batch run ${b.parentRunId}; back in the line to be tested in a batch`;
  for (const e of members) {
    setPrState(ctx, e, 'pending', reason);
    writablePr(ctx, pr(s, e.number)).cleared = true;
  }
}

/**
 * Start the waiting segments of every bisection, while the bisection pool has a free slot: each on the
 * target branch as it is, plus its own PRs (segmentBase).
 */
export function startSegments(ctx: Ctx): boolean {
  let changed = false;
  for (const b of ctx.s.bisections) changed = startNodes(ctx, b) || changed;
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
    changed = splitFailed(b) || changed;
    changed = unblock(ctx, b) || changed;
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
 * running node's PRs are under test in its run, a segment run on the target branch alone. Anything else
 * (a PR cancelled, a segment restarted from outside, a state saved by an older engine, whose segments
 * ran in the line) stops it, and its PRs are retested in line.
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
    const run = findRun(s, node.runId);
    if (run === undefined || !offLine(run, node)) return false;
    return node.prs.every((n) => {
      const e = s.prs.get(n);
      return e !== undefined && e.state === 'testing' && e.runId === node.runId;
    });
  });
}

/**
 * Split failed nodes in two halves. The right half waits for the left (blocked): with
 * bisection_skip_redundant_tests it is known to fail if the left passes; otherwise it is then tested on
 * top of the left half's PRs, so that a failure that needs both halves is still found (two halves
 * passing each on their own would clear the batch, which would fail again in the line, for ever).
 */
function splitFailed(b: Bisection): boolean {
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
      ...(node.on === undefined ? {} : { on: node.on }),
    });
    b.nodes.push(half(node.prs.slice(0, mid), 'waiting'), half(node.prs.slice(mid), 'blocked'));
    changed = true;
  });
  return changed;
}

/**
 * A blocked right half, once its left sibling settled: failed, it is tested on its own; passed, it is
 * known to fail (bisection_skip_redundant_tests) or tested on top of the left half's PRs.
 */
function unblock(ctx: Ctx, b: Bisection): boolean {
  const skip = ctx.s.settings.optimizationMode === 'bisection_skip_redundant_tests';
  let changed = false;
  b.nodes.forEach((node, i) => {
    const left = b.nodes[i - 1];
    if (node.status !== 'blocked' || !left || left.parent !== node.parent) return;
    if (left.status === 'passed' && skip) {
      node.status = 'failed';
      node.inferred = true;
      changed = true;
    } else if (left.status === 'passed') {
      node.status = 'waiting';
      node.on = [...(node.on ?? []), ...left.prs];
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

/**
 * The PRs a segment is tested on top of, on the target branch: those of node.on (cleared halves) not
 * merged yet (the merged ones are in the target branch) and still queued.
 */
function segmentBase(ctx: Ctx, node: BisectNode): number[] {
  const base: number[] = [];
  for (const n of node.on ?? []) {
    const state = ctx.s.prs.get(n)?.state;
    if (state !== undefined && state !== 'merged' && !isTerminal(state) && state !== 'not_ready')
      base.push(n);
  }
  return base;
}

/**
 * Start waiting segments in the bisection pool, each on the target branch plus its own PRs (and, with
 * optimizationMode off, a right half on top of its cleared left half), off the line.
 */
function startNodes(ctx: Ctx, b: Bisection): boolean {
  const { s } = ctx;
  // A run without required statuses could prove nothing: the bisection waits until the queue has some.
  if (!canStartRuns(s) || resolveRequired(s).statuses.length === 0) return false;
  let changed = false;
  for (const node of b.nodes) {
    if (node.status !== 'waiting') continue;
    let running = 0;
    for (const r of runList(ctx)) if (r.kind === 'bisection' && isActive(r)) running += 1;
    if (running >= s.settings.bisectionConcurrency) break;
    const run = createRun(ctx, {
      kind: 'bisection',
      tested: node.prs,
      dependsOn: segmentBase(ctx, node),
      parentRunId: b.parentRunId,
    });
    for (const n of node.prs) {
      setPrState(
        ctx,
        pr(s, n),
        'testing',
        `testing a segment of failed batch run ${b.parentRunId} on ${s.branch} in run ${run.id}`,
        run.id,
      );
    }
    node.status = 'running';
    node.runId = run.id;
    changed = true;
  }
  return changed;
}
