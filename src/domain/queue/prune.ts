import { IntMap } from '../../lib/int-map.ts';
import { carryIndexes, isTerminal } from './context.ts';
import type { LineageEntry, PrEntry, QueueState, TestRun } from './types.ts';

/** What pruning took out of a queue's state: to archive, so reads of old PRs and runs still answer. */
export interface Pruned {
  state: QueueState;
  prs: PrEntry[];
  runs: TestRun[];
}

/**
 * Takes out of the state what no decision can read any more, so the state (read and written on every
 * event) stays the size of the live queue instead of its whole history: runs that
 * finished, whose test branch is deleted and that nothing refers to (a PR in the order, a bisection);
 * then PRs that ended and that no kept run contains and that are not among the merges since the oldest
 * kept run's base. Decision-neutral: the queue simulation gives identical results with and without it.
 * It runs after every event, so its cost follows what may go, not the queue: one walk of the PR map
 * by value finds the ended PRs and the PRs referring to a droppable run (few), and only those are
 * looked up in the order and the kept runs; the map is rebuilt only when a PR goes.
 */
export function pruneHistory(s: QueueState): Pruned {
  const runList = Object.values(s.runs);
  let droppable: Set<string> | undefined;
  for (const run of runList) {
    const finished = run.status !== 'building' && run.status !== 'in_progress';
    if (!finished || !run.branchDeleted) continue;
    droppable ??= new Set();
    droppable.add(run.id);
  }
  const entries = s.prs.values();
  // The ended PRs, in the map's order (ascending numbers), each until something is found to need it.
  let ended: Map<number, PrEntry> | undefined;
  let referring: PrEntry[] | undefined;
  for (const e of entries) {
    if (isTerminal(e.state)) {
      ended ??= new Map();
      ended.set(e.number, e);
    }
    if (droppable === undefined) continue;
    if ((e.runId && droppable.has(e.runId)) || (e.proofRunId && droppable.has(e.proofRunId))) {
      referring ??= [];
      referring.push(e);
    }
  }
  if (droppable !== undefined) keepReferenced(s, droppable, referring);
  const droppedRuns: TestRun[] = [];
  if (droppable !== undefined && droppable.size > 0)
    for (const run of runList) if (droppable.has(run.id)) droppedRuns.push(run);
  if (ended === undefined && droppedRuns.length === 0) return { state: s, prs: [], runs: [] };
  if (ended !== undefined) stillNeeded(s, ended, runList, droppable);
  const droppedPrs = ended === undefined ? [] : [...ended.values()];
  if (droppedRuns.length === 0 && droppedPrs.length === 0) return { state: s, prs: [], runs: [] };
  let runs = s.runs;
  if (droppedRuns.length > 0) {
    // Rebuilt in the same order (run ids are not integers: the map's order is insertion order).
    runs = {};
    for (const run of runList) if (!droppable?.has(run.id)) runs[run.id] = run;
  }
  let prs = s.prs;
  if (droppedPrs.length > 0) {
    // A new map without them, filled in ascending order (each set an append), not a copy with deletes.
    const gone = new Set(droppedPrs);
    prs = new IntMap();
    for (const e of entries) if (!gone.has(e)) prs.set(e.number, e);
    // Only ended PRs went: none was busy or not_ready.
    carryIndexes(s.prs, prs);
  }
  return { state: { ...s, runs, prs }, prs: droppedPrs, runs: droppedRuns };
}

/**
 * Take out of `droppable` the runs still referred to: by a PR in the order (`referring`: the PRs whose
 * run or proof is droppable, wherever they are) or by a bisection.
 */
function keepReferenced(
  s: QueueState,
  droppable: Set<string>,
  referring: readonly PrEntry[] | undefined,
): void {
  for (const e of referring ?? []) {
    if (!s.order.includes(e.number)) continue;
    if (e.runId) droppable.delete(e.runId);
    if (e.proofRunId) droppable.delete(e.proofRunId);
  }
  for (const b of s.bisections) {
    droppable.delete(b.parentRunId);
    for (const node of b.nodes) if (node.runId) droppable.delete(node.runId);
  }
}

/**
 * Take out of `ended` the PRs the queue still needs: those in the order or merging, those a kept run
 * contains, and the merges since the oldest kept run's base (the first lineage entry that is a kept
 * run's base). `dropped`: the ids of the runs that go.
 */
function stillNeeded(
  s: QueueState,
  ended: Map<number, PrEntry>,
  runList: readonly TestRun[],
  dropped: ReadonlySet<string> | undefined,
): void {
  // Ended PRs are out of the order (setPrState takes them out): a few searches, not a walk with lookups.
  for (const n of [...ended.keys()]) if (s.order.includes(n)) ended.delete(n);
  if (s.merging) ended.delete(s.merging.prNumber);
  const bases = new Set<string>();
  for (const run of runList) {
    if (ended.size === 0) return;
    if (dropped?.has(run.id)) continue;
    bases.add(run.baseSha);
    for (const h of run.prHeads) ended.delete(h.number);
    for (const n of run.tested) ended.delete(n);
  }
  if (ended.size === 0) return;
  let oldestBase = s.lineage.length;
  for (let i = 0; i < s.lineage.length; i += 1) {
    if (bases.has((s.lineage[i] as LineageEntry).sha)) {
      oldestBase = i;
      break;
    }
  }
  for (let i = oldestBase; i < s.lineage.length; i += 1) {
    const n = (s.lineage[i] as LineageEntry).prNumber;
    if (n !== null) ended.delete(n);
  }
}
