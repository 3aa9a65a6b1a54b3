import { isTerminal } from './context.ts';
import type { PrEntry, QueueState, TestRun } from './types.ts';

/** What pruning took out of a queue's state: to archive, so reads of old PRs and runs still answer. */
export interface Pruned {
  state: QueueState;
  prs: PrEntry[];
  runs: TestRun[];
}

/** Runs that a queued PR or a bisection still refers to. */
function referencedRuns(s: QueueState): Set<string> {
  const keep = new Set<string>();
  for (const n of s.order) {
    const e = s.prs[String(n)];
    if (e?.runId) keep.add(e.runId);
    if (e?.proofRunId) keep.add(e.proofRunId);
  }
  for (const b of s.bisections) {
    keep.add(b.parentRunId);
    for (const node of b.nodes) if (node.runId) keep.add(node.runId);
  }
  return keep;
}

/**
 * Takes out of the state what no decision can read any more, so the state (one JSON row, read and
 * written on every event) stays the size of the live queue instead of its whole history: runs that
 * finished, whose test branch is deleted and that nothing refers to; then PRs that ended and that no
 * kept run contains and that are not among the merges since the oldest kept run's base.
 * Decision-neutral: the queue simulation gives identical results with and without it.
 */
export function pruneHistory(s: QueueState): Pruned {
  const keep = referencedRuns(s);
  const runs: QueueState['runs'] = {};
  const droppedRuns: TestRun[] = [];
  const needed = new Set<number>(s.order);
  if (s.merging) needed.add(s.merging.prNumber);
  let oldestBase = s.lineage.length;
  for (const [id, run] of Object.entries(s.runs)) {
    const finished = run.status !== 'building' && run.status !== 'in_progress';
    if (finished && run.branchDeleted && !keep.has(id)) {
      droppedRuns.push(run);
      continue;
    }
    runs[id] = run;
    for (const h of run.prHeads) needed.add(h.number);
    for (const n of run.tested) needed.add(n);
    const at = s.lineage.findIndex((l) => l.sha === run.baseSha);
    if (at >= 0 && at < oldestBase) oldestBase = at;
  }
  for (const l of s.lineage.slice(oldestBase)) if (l.prNumber !== null) needed.add(l.prNumber);
  const prs: QueueState['prs'] = {};
  const droppedPrs: PrEntry[] = [];
  for (const [key, e] of Object.entries(s.prs)) {
    if (!isTerminal(e.state) || needed.has(e.number)) prs[key] = e;
    else droppedPrs.push(e);
  }
  if (droppedRuns.length === 0 && droppedPrs.length === 0) return { state: s, prs: [], runs: [] };
  return { state: { ...s, runs, prs }, prs: droppedPrs, runs: droppedRuns };
}
