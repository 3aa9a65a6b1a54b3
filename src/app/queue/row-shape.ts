import type { PrEntry, PrHead, QueueAction, QueueState, TestRun } from '../../domain/queue/index.ts';
import { IntMap } from '../../lib/int-map.ts';
import { headsInOrder } from '../../store/queue/archive.ts';

// How a queue's runs and outbox actions are written as JSON (queue_runs.data, queue_actions.action).
// A run's heads (one per PR merged into its test branch: the PRs ahead of it, then its own) are the
// heads of those PRs' entries while it is live, and a failing head restarts the 24 runs behind it, each
// with the heads of every PR ahead: written out, 300 commit ids of 40 hex digits in the runs and as many
// again in their create_test_run actions. So a run row leaves its heads out when each is its PR's head
// in the entries saved with it, and a create_test_run action leaves them out always (the executor takes
// them from the run). Rows and actions stored whole (before this, or a run whose PR's head moved since)
// are read as they are.

type CreateTestRun = Extract<QueueAction, { type: 'create_test_run' }>;

/** A create_test_run action as stored: prHeads left out (new) or there (stored before, or repeated). */
export type StoredCreateTestRun = Omit<CreateTestRun, 'prHeads'> & { prHeads?: PrHead[] };
/** An outbox action as stored. */
export type StoredQueueAction = Exclude<QueueAction, { type: 'create_test_run' }> | StoredCreateTestRun;

/** Whether each of the run's heads is, in order, the head of the entry of a PR it depends on, then tests. */
function headsAreEntries(r: TestRun, prs: QueueState['prs']): boolean {
  return headsInOrder(r, (n) => prs.get(n)?.headSha);
}

/**
 * A run's row JSON in a state whose PR entries are `prs`: without its heads when the entries give them.
 * A step that moves an entry's head or drops an entry must write again every run that relies on it
 * (apply.ts: stepChanges), so that no stored run relies on a head that is not stored.
 */
export function runRowJson(r: TestRun, prs: QueueState['prs']): string {
  if (!headsAreEntries(r, prs)) return JSON.stringify(r);
  const { prHeads: _, ...rest } = r;
  return JSON.stringify(rest);
}

/** Whether a run stored in a state needs its row written again because the entries of `moved` changed heads or went. */
export function reliesOn(r: TestRun, moved: ReadonlySet<number>): boolean {
  for (const n of r.dependsOn) if (moved.has(n)) return true;
  for (const n of r.tested) if (moved.has(n)) return true;
  return false;
}

/** The head of PR n for a run stored without its heads: its entry's. */
function entryHead(prs: QueueState['prs'], n: number, runId: string): PrHead {
  const e: PrEntry | undefined = prs.get(n);
  if (e === undefined)
    throw new Error(`queue run ${runId} is stored without heads, and PR #${n} has no entry`);
  return { number: n, sha: e.headSha };
}

/** A run from its row JSON, its heads put back from the PR entries of the same state when left out. */
export function runFromRow(text: string, prs: QueueState['prs']): TestRun {
  const r = JSON.parse(text) as Omit<TestRun, 'prHeads'> & { prHeads?: PrHead[] };
  if (r.prHeads === undefined) {
    const heads: PrHead[] = [];
    for (const n of r.dependsOn) heads.push(entryHead(prs, n, r.id));
    for (const n of r.tested) heads.push(entryHead(prs, n, r.id));
    r.prHeads = heads;
  }
  return r as TestRun;
}

// A PR entry's history (its state changes) only grows while the entry lives, and a failing head adds
// two changes to each of the 24 entries behind it: rewritten whole in every entry row at each restart,
// the histories were most of a failing head's 31 KB of entries at 1,000 PRs queued (and grow with every
// restart a PR waits through). So an entry row holds only the first INLINE_HISTORY changes (a submission
// makes two: its row needs nothing more), and the rest is stored in parts (queue_pr_history, migration
// 0036): each step that adds changes past those writes them as one part, from their index on; a new
// submission under the same number (or a history that does not start with the stored one) has its stored
// parts deleted and written anew. Readers put the parts after the row's own changes.

/** Changes of an entry's history its row holds itself; the rest is in parts. */
export const INLINE_HISTORY = 2;

/** A part of an entry's history as stored: the changes from index `idx` on (JSON array). */
export interface HistoryPart {
  readonly number: number;
  readonly idx: number;
  readonly data: string;
}

/** An entry's row JSON: the entry with the first INLINE_HISTORY changes of its history (in place). */
export function entryRowJson(e: PrEntry): string {
  if (e.history.length <= INLINE_HISTORY) return JSON.stringify(e);
  return JSON.stringify({ ...e, history: e.history.slice(0, INLINE_HISTORY) });
}

/**
 * How the stored parts of `e`'s history change when `was` (the entry saved before, if any) becomes `e`:
 * the part to add (its changes past the row's and the parts stored), and whether the stored parts go
 * first (a new submission, or a history that does not start with the changes saved, the same objects).
 */
export function historyChange(
  was: PrEntry | undefined,
  e: PrEntry,
): { reset: boolean; part: HistoryPart | undefined } {
  const h = e.history;
  let from = INLINE_HISTORY;
  let reset = false;
  if (was !== undefined) {
    const old = was.history;
    let same = was.id === e.id && old.length <= h.length;
    for (let i = old.length - 1; same && i >= 0; i -= 1) same = old[i] === h[i];
    if (same) from = Math.max(INLINE_HISTORY, old.length);
    else reset = old.length > INLINE_HISTORY;
  }
  if (from >= h.length) return { reset, part: undefined };
  return { reset, part: { number: e.number, idx: from, data: JSON.stringify(h.slice(from)) } };
}

/**
 * The state from its header (JSON with empty prs and runs) and the JSON of its PR entries and runs (in
 * the state's order), as the rows hold them, with the parts of the entries' histories (by number, then
 * index), put after the changes the entry's row holds. Not frozen.
 */
export function stateFromRows(
  header: string,
  rows: {
    prs: readonly string[];
    runs: readonly string[];
    history?: readonly { number: number; data: string }[];
  },
): QueueState {
  const state = JSON.parse(header) as QueueState;
  const prs: QueueState['prs'] = new IntMap();
  for (const text of rows.prs) {
    const e = JSON.parse(text) as PrEntry;
    prs.set(e.number, e);
  }
  for (const part of rows.history ?? []) {
    const e = prs.get(Number(part.number));
    if (e === undefined) continue;
    for (const change of JSON.parse(part.data) as PrEntry['history']) e.history.push(change);
  }
  const runs: QueueState['runs'] = {};
  for (const text of rows.runs) {
    const r = runFromRow(text, prs);
    runs[r.id] = r;
  }
  state.prs = prs;
  state.runs = runs;
  return state;
}

/** An outbox action's JSON: a create_test_run without its heads (the executor reads them from the run). */
export function actionJson(a: QueueAction): string {
  if (a.type !== 'create_test_run') return JSON.stringify(a);
  const { prHeads: _, ...rest } = a;
  return JSON.stringify(rest);
}
