import type { PrEntry, PrHead, QueueAction, QueueState, TestRun } from '../../domain/queue/index.ts';
import { IntMap } from '../../lib/int-map.ts';

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
  const heads = r.prHeads;
  const deps = r.dependsOn;
  if (heads.length !== deps.length + r.tested.length) return false;
  for (let i = 0; i < heads.length; i += 1) {
    const h = heads[i] as PrHead;
    const n = i < deps.length ? deps[i] : r.tested[i - deps.length];
    if (h.number !== n || prs.get(h.number)?.headSha !== h.sha) return false;
  }
  return true;
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

/**
 * The state from its header (JSON with empty prs and runs) and the JSON of its PR entries and runs (in
 * the state's order), as the rows hold them. Not frozen.
 */
export function stateFromRows(
  header: string,
  rows: { prs: readonly string[]; runs: readonly string[] },
): QueueState {
  const state = JSON.parse(header) as QueueState;
  const prs: QueueState['prs'] = new IntMap();
  for (const text of rows.prs) {
    const e = JSON.parse(text) as PrEntry;
    prs.set(e.number, e);
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
