import { type Ctx, canStartRuns, findRun, isActive, pr, setPrState } from './context.ts';
import { createRun, resolveRequired } from './runs.ts';
import type { Bisection, BisectNode, TestRun } from './types.ts';

/**
 * Bisection of a failed batch (mergequeue.md §5). Each segment is tested alone on the batch's predicted
 * base; a failing segment is halved until single PRs are found. With bisection_skip_redundant_tests the
 * right half waits for the left: if the left passes, the right is known to fail without a run.
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
  for (const n of members) {
    setPrState(ctx, pr(ctx.s, n), 'testing', `bisecting failed batch (run ${failed.id})`, failed.id);
  }
}

/** Stop bisecting a batch run (it was superseded); its runs are cancelled by the cleanup. */
export function abortBisection(ctx: Ctx, parentRunId: string): void {
  ctx.s.bisections = ctx.s.bisections.filter((b) => b.parentRunId !== parentRunId);
}

export function bisectionOf(ctx: Ctx, parentRunId: string): Bisection | undefined {
  return ctx.s.bisections.find((b) => b.parentRunId === parentRunId);
}

/** Record the result of a bisection run on its node. */
export function onBisectionRunResult(ctx: Ctx, run: TestRun): void {
  for (const b of ctx.s.bisections) {
    const node = b.nodes.find((n) => n.runId === run.id && n.status === 'running');
    if (node) node.status = run.status === 'succeeded' ? 'passed' : 'failed';
  }
}

/** Split, infer, start runs and finish; returns whether anything changed. */
export function advanceBisections(ctx: Ctx): boolean {
  let changed = false;
  for (const b of [...ctx.s.bisections]) {
    changed = splitFailed(ctx, b) || changed;
    changed = unblock(b) || changed;
    changed = startNodes(ctx, b) || changed;
    const settled = (n: BisectNode) =>
      n.status === 'passed' || (n.status === 'failed' && (n.split || n.prs.length < 2));
    if (b.nodes.every(settled)) {
      finish(ctx, b);
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

function startNodes(ctx: Ctx, b: Bisection): boolean {
  const parent = findRun(ctx.s, b.parentRunId);
  // A run without required statuses could prove nothing: the bisection waits until the queue has some.
  if (!parent || !canStartRuns(ctx.s) || resolveRequired(ctx.s).statuses.length === 0) return false;
  let changed = false;
  for (const node of b.nodes) {
    const running = Object.values(ctx.s.runs).filter((r) => r.kind === 'bisection' && isActive(r)).length;
    if (node.status !== 'waiting' || running >= ctx.s.settings.bisectionConcurrency) continue;
    const dependsOn = parent.dependsOn.filter((n) => pr(ctx.s, n).state !== 'merged');
    const run = createRun(ctx, { kind: 'bisection', tested: node.prs, dependsOn, parentRunId: parent.id });
    node.status = 'running';
    node.runId = run.id;
    changed = true;
  }
  return changed;
}

/** Culprits fail; the passing segment at the head of the batch is proven; the rest is retested. */
function finish(ctx: Ctx, b: Bisection): void {
  const [root] = b.nodes;
  abortBisection(ctx, b.parentRunId);
  if (!root) return;
  const culprits = b.nodes.filter((n) => !n.split && n.status === 'failed' && n.prs.length === 1);
  const proven = b.nodes
    .filter((n) => n.status === 'passed' && n.prs[0] === root.prs[0] && n.runId !== null)
    .sort((x, y) => y.prs.length - x.prs.length)[0];
  for (const n of root.prs) {
    const e = pr(ctx.s, n);
    const culprit = culprits.find((c) => c.prs[0] === n);
    if (culprit) {
      const why = culprit.inferred
        ? 'inferred from the other half passing'
        : findRun(ctx.s, culprit.runId)?.failure?.reason;
      setPrState(ctx, e, 'failed', `bisection of batch run ${b.parentRunId} found it failing: ${why}`);
    } else if (proven?.prs.includes(n) && proven.runId) {
      setPrState(ctx, e, 'tests_passed', `passed in bisection run ${proven.runId}`, proven.runId);
    } else {
      setPrState(ctx, e, 'pending', `not the cause of batch run ${b.parentRunId} failing; retesting`);
    }
  }
}
