import { isTerminal } from './context.ts';
import type { LineageEntry, PrEntry, QueueState, TestRun } from './types.ts';

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
    const e = s.prs[n];
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
 * Takes out of the state what no decision can read any more, so the state (read and written on every
 * event) stays the size of the live queue instead of its whole history: runs that
 * finished, whose test branch is deleted and that nothing refers to; then PRs that ended and that no
 * kept run contains and that are not among the merges since the oldest kept run's base.
 * Decision-neutral: the queue simulation gives identical results with and without it.
 * It walks the maps by value (the PR map is keyed by integers: walking keys would make a string of
 * each) and builds new ones only when something goes.
 */
export function pruneHistory(s: QueueState): Pruned {
  let keep: Set<string> | undefined;
  const droppedRuns: TestRun[] = [];
  for (const run of Object.values(s.runs)) {
    const finished = run.status !== 'building' && run.status !== 'in_progress';
    if (!finished || !run.branchDeleted) continue;
    keep ??= referencedRuns(s);
    if (!keep.has(run.id)) droppedRuns.push(run);
  }
  // Ended PRs are few: look for one before working out which are still needed.
  let ended = false;
  for (const e of Object.values(s.prs)) {
    if (isTerminal(e.state)) {
      ended = true;
      break;
    }
  }
  if (!ended && droppedRuns.length === 0) return { state: s, prs: [], runs: [] };
  const dropped = new Set(droppedRuns);
  const runs: QueueState['runs'] = {};
  const needed = new Set<number>(s.order);
  if (s.merging) needed.add(s.merging.prNumber);
  let oldestBase = s.lineage.length;
  for (const run of Object.values(s.runs)) {
    if (dropped.has(run)) continue;
    runs[run.id] = run;
    for (const h of run.prHeads) needed.add(h.number);
    for (const n of run.tested) needed.add(n);
    const at = s.lineage.findIndex((l) => l.sha === run.baseSha);
    if (at >= 0 && at < oldestBase) oldestBase = at;
  }
  for (let i = oldestBase; i < s.lineage.length; i += 1) {
    const n = (s.lineage[i] as LineageEntry).prNumber;
    if (n !== null) needed.add(n);
  }
  const prs: QueueState['prs'] = {};
  const droppedPrs: PrEntry[] = [];
  for (const e of Object.values(s.prs)) {
    if (!isTerminal(e.state) || needed.has(e.number)) prs[e.number] = e;
    else droppedPrs.push(e);
  }
  if (droppedRuns.length === 0 && droppedPrs.length === 0) return { state: s, prs: [], runs: [] };
  return { state: { ...s, runs, prs }, prs: droppedPrs, runs: droppedRuns };
}
