import type { IntMap } from '../../lib/int-map.ts';
import type { QueueAction } from './actions.ts';
import type { DepsMemo } from './runs.ts';
import type { LineageEntry, PrEntry, PrState, QueueState, TestRun } from './types.ts';

/**
 * Working context of one step: a copy of the state, the clock value and the actions so far.
 * The copy is copy-on-write (step.ts): its containers are private, but PR entries and test runs are
 * shared with the input until writablePr / writableRun give the step its own copy of one. Every write
 * to an entry or run goes through those two (the unit tests deep-freeze the input, so a write that
 * does not throws).
 */
export interface Ctx {
  s: QueueState;
  now: number;
  actions: QueueAction[];
  /** Entries and runs this step copied or created: its own to write. */
  owned: Set<object>;
  /** PR numbers whose entry is testing, tests_passed or pending_failure (kept by setPrState). */
  busy: Set<number>;
  /** PR numbers whose entry is not_ready (kept by setPrState). */
  notReady: Set<number>;
  /** busyOrdered's answer until an entry or the order changes. */
  busyCache: BusyCache | null;
  /**
   * Where in busyCache's entries the last entry written was found: the walks that write entries
   * (supersede, startRuns) go in queue order, so the next one is mostly just after it. Only a hint.
   */
  busyAt: number;
  /**
   * Bumped whenever the line may have changed: the order, or whether a PR is aside (isAside). What is
   * derived from the line (resolve.ts: queueLine) is valid while it stays the same.
   */
  lineEpoch: number;
  /**
   * Where the step changed what a run's staleness reads (graph.ts: staleReason), in the order it did:
   * each entry is the index of the queue order from which on something may differ (0: anywhere).
   * A run's staleness reads the order only up to its last PR (and the entries, aside or not, there),
   * so a change behind it cannot make it stale (resolve.ts: invalidateStale keeps what it found).
   */
  changes: number[];
  /** mergedSince by base commit for one lineage (resolve.ts: mergedSinceKept). */
  mergedSince: { lineage: LineageEntry[]; length: number; bySha: Map<string, number[] | null> } | null;
  /** Object.values(s.runs) as the step changes it (runList), once something asked for it. */
  runs: TestRun[] | null;
  /** Runs invalidateStale found current: the length of `changes` then and their last PR's index. */
  current: Map<string, { at: number; upTo: number }>;
  /** The heads and targets of the last dependsOn a run was created with (runs.ts: createRun). */
  depsMemo: DepsMemo | null;
}

/** States of admitted PRs whose testing is under way or done: the only ones that refer to runs. */
export function isBusy(state: PrState): boolean {
  return state === 'testing' || state === 'tests_passed' || state === 'pending_failure';
}

/** newCtx's indexes of a PR map: its busy and its not_ready PRs, as they were at `version`. */
interface PrIndexes {
  version: number;
  busy: ReadonlySet<number>;
  notReady: ReadonlySet<number>;
}

/**
 * The indexes of the PR maps steps returned (rememberIndexes), kept beside each map while it is not
 * written (IntMap.version): a step on that state copies them (a few numbers) instead of walking every
 * entry. Entries are never written in place (copy-on-write), so an unwritten map holds the same states.
 */
const knownIndexes = new WeakMap<IntMap<PrEntry>, PrIndexes>();

/** Keep the indexes of the state a step returns, for the next step on it. */
export function rememberIndexes(ctx: Ctx): void {
  const { prs } = ctx.s;
  knownIndexes.set(prs, { version: prs.version, busy: ctx.busy, notReady: ctx.notReady });
}

/**
 * `to` holds what `from` holds but PRs in neither index (prune.ts: ended PRs taken out): it has the
 * same indexes, if `from`'s are known.
 */
export function carryIndexes(from: IntMap<PrEntry>, to: IntMap<PrEntry>): void {
  const known = knownIndexes.get(from);
  if (known !== undefined && known.version === from.version)
    knownIndexes.set(to, { version: to.version, busy: known.busy, notReady: known.notReady });
}

/**
 * A new context for a step on `s` (already copied by the caller from a state whose PR map is `input`):
 * indexes of busy and not_ready PRs, copied from those kept for `input` or found by walking the entries.
 */
export function newCtx(s: QueueState, now: number, input?: IntMap<PrEntry>): Ctx {
  let busy: Set<number>;
  let notReady: Set<number>;
  const known = input === undefined ? undefined : knownIndexes.get(input);
  if (known !== undefined && known.version === (input as IntMap<PrEntry>).version) {
    busy = new Set(known.busy);
    notReady = new Set(known.notReady);
  } else {
    busy = new Set<number>();
    notReady = new Set<number>();
    const { prs } = s;
    for (let i = 0; i < prs.size; i += 1) {
      const e = prs.valueAt(i);
      const state = e.state;
      if (state === 'not_ready') notReady.add(e.number);
      else if (state === 'testing' || state === 'tests_passed' || state === 'pending_failure')
        busy.add(e.number);
    }
  }
  return {
    s,
    now,
    actions: [],
    owned: new Set(),
    busy,
    notReady,
    busyCache: null,
    busyAt: 0,
    lineEpoch: 0,
    changes: [],
    current: new Map(),
    runs: null,
    mergedSince: null,
    depsMemo: null,
  };
}

/** The step's own copy of a PR entry, to write (made on first write; the input keeps its entry). */
export function writablePr(ctx: Ctx, e: PrEntry): PrEntry {
  if (ctx.owned.has(e)) return e;
  const copy: PrEntry = { ...e, history: [...e.history] };
  if (e.headChecks !== undefined) copy.headChecks = [...e.headChecks];
  ctx.s.prs.set(e.number, copy);
  ctx.owned.add(copy);
  if (ctx.busyCache !== null) {
    const at = busyIndex(ctx, ctx.busyCache, e);
    if (at >= 0) ownBusyCache(ctx, ctx.busyCache).entries[at] = copy;
  }
  return copy;
}

/**
 * The step's own copy of a test run, to write. Its status may change, and with it whether the PRs
 * waiting on it are aside: a change anywhere in the line, unless `unreferenced` (no busy PR refers to it).
 */
export function writableRun(ctx: Ctx, run: TestRun, unreferenced = false): TestRun {
  if (!unreferenced) ctx.changes.push(0);
  if (ctx.owned.has(run)) return run;
  const copy: TestRun = { ...run, checks: [...run.checks] };
  ctx.s.runs[run.id] = copy;
  ctx.owned.add(copy);
  if (ctx.runs !== null) {
    const at = ctx.runs.indexOf(run);
    if (at >= 0) ctx.runs[at] = copy;
    else ctx.runs = null;
  }
  return copy;
}

/** Record a PR entry the step created (its own to write). */
export function addPr(ctx: Ctx, e: PrEntry): void {
  ctx.s.prs.set(e.number, e);
  ctx.owned.add(e);
  ctx.busyCache = null;
  ctx.busy.delete(e.number);
  ctx.notReady.delete(e.number);
}

/** Record a test run the step created. */
export function addRun(ctx: Ctx, run: TestRun): void {
  // A new key goes last in Object.values' order (run ids are not integers); one already there stays put.
  if (ctx.runs !== null) {
    if (ctx.s.runs[run.id] === undefined) ctx.runs.push(run);
    else ctx.runs = null;
  }
  ctx.s.runs[run.id] = run;
  ctx.owned.add(run);
}

/**
 * The state's runs in the order Object.values(s.runs) gives them, kept up to date by writableRun and
 * addRun (the only writers of s.runs), so the rounds that look at every run do not walk the map each time.
 * Read-only: change runs through writableRun.
 */
export function runList(ctx: Ctx): readonly TestRun[] {
  if (ctx.runs === null) ctx.runs = Object.values(ctx.s.runs);
  return ctx.runs;
}

/**
 * A PR of a failed batch bisected on the side: out of the line (no run is built on it) until a segment
 * holding it passes (bisect.ts). It is testing and waits on a run that ended (the batch run being
 * bisected) or on a bisection run (its segment, tested on the target branch off the line).
 */
export function isAside(s: QueueState, e: PrEntry): boolean {
  if (e.state !== 'testing' || e.runId === null) return false;
  const run = s.runs[e.runId];
  return run === undefined || !isActive(run) || run.kind === 'bisection';
}

/**
 * isAside for a walk of PRs in queue order while no run changes: the answer for a run is looked up once
 * for the PRs next to each other that wait on it (a batch), not once per PR.
 */
export function asideWalk(s: QueueState): (e: PrEntry) => boolean {
  let lastRun: string | null = null;
  let lastAside = false;
  return (e) => {
    if (e.state !== 'testing' || e.runId === null) return false;
    if (e.runId !== lastRun) {
      lastRun = e.runId;
      lastAside = isAside(s, e);
    }
    return lastAside;
  };
}

/** Move PRs within the queue order to index i of the order without them (keeping their own order). */
export function moveInOrder(ctx: Ctx, prs: readonly number[], i: (order: number[]) => number): void {
  // A few PRs move in a long order: found by indexOf and spliced out and in (the order holds each PR once).
  const old = ctx.s.order;
  const from: number[] = [];
  const present: number[] = [];
  for (const n of prs) {
    const k = old.indexOf(n);
    if (k < 0) continue;
    present.push(n);
    if (!from.includes(k)) from.push(k);
  }
  from.sort((a, b) => b - a);
  const rest = old.slice();
  for (const k of from) rest.splice(k, 1);
  const at = i(rest);
  // The order is the same as before up to the first PR moved or the place they move to.
  const firstMoved = from.length === 0 ? old.length : (from[from.length - 1] as number);
  ctx.changes.push(firstMoved < at ? firstMoved : at);
  rest.splice(at, 0, ...present);
  ctx.s.order = rest;
  ctx.busyCache = null;
  ctx.lineEpoch += 1;
}

/** Insert an admitted PR into the queue order at index i. */
export function insertInOrder(ctx: Ctx, i: number, n: number): void {
  ctx.s.order.splice(i, 0, n);
  ctx.changes.push(i);
  ctx.busyCache = null;
  ctx.lineEpoch += 1;
}

/**
 * Busy entries (testing, tests_passed, pending_failure) in queue order: ordered(s) filtered to those
 * states, found by walking the order only as far as its last busy PR. `end` is the index after that PR.
 */
export function busyOrdered(ctx: Ctx): { entries: readonly PrEntry[]; end: number } {
  if (ctx.busyCache !== null) {
    ctx.busyCache.shared = true;
    return ctx.busyCache;
  }
  const { s, busy } = ctx;
  const entries: PrEntry[] = [];
  let end = 0;
  for (let i = 0; i < s.order.length && entries.length < busy.size; i += 1) {
    const n = s.order[i] as number;
    if (!busy.has(n)) continue;
    entries.push(pr(s, n));
    end = i + 1;
  }
  ctx.busyCache = { entries, end, shared: true };
  return ctx.busyCache;
}

export const TERMINAL: readonly PrState[] = ['merged', 'failed', 'cancelled'];

export function isTerminal(state: PrState): boolean {
  return state === 'merged' || state === 'failed' || state === 'cancelled';
}

export function findPr(s: QueueState, n: number): PrEntry | undefined {
  return s.prs.get(n);
}

/** The entry of a PR the engine knows to exist (an internal invariant). */
export function pr(s: QueueState, n: number): PrEntry {
  const e = findPr(s, n);
  if (!e) throw new Error(`merge queue: unknown PR #${n}`);
  return e;
}

export function findRun(s: QueueState, id: string | null): TestRun | undefined {
  return id === null ? undefined : s.runs[id];
}

export function isActive(run: TestRun): boolean {
  return run.status === 'building' || run.status === 'in_progress';
}

export function nextId(s: QueueState): string {
  const id = `${s.idSeed}-${s.nextSeq}`;
  s.nextSeq += 1;
  return id;
}

/**
 * Move a PR to a state, record why in its history and ask for it to be reported.
 * runRef is the run it now waits on (testing, pending_failure) or that proves it (tests_passed).
 */
export function setPrState(ctx: Ctx, entry: PrEntry, state: PrState, reason: string, runRef?: string): void {
  const wasAside = isAside(ctx.s, entry);
  const wasKind = staleKind(entry.state);
  const e = writablePr(ctx, entry);
  e.state = state;
  e.reason = reason;
  e.stateChangedAt = ctx.now;
  e.history.push({ state, at: ctx.now, reason });
  if (isTerminal(state) || state === 'not_ready') {
    const at = ctx.s.order.indexOf(e.number);
    if (at >= 0) {
      ctx.s.order.splice(at, 1);
      ctx.lineEpoch += 1;
      ctx.changes.push(at);
      ctx.busyCache = null;
    } else if (staleKind(state) !== wasKind) ctx.changes.push(0);
  } else if (staleKind(state) !== wasKind) noteChangeAt(ctx, e.number);
  const nowBusy = isBusy(state);
  if (ctx.busy.has(e.number) !== nowBusy) leaveOrJoinBusy(ctx, e, nowBusy);
  if (nowBusy) ctx.busy.add(e.number);
  else ctx.busy.delete(e.number);
  if (state === 'not_ready') ctx.notReady.add(e.number);
  else ctx.notReady.delete(e.number);
  const waits = state === 'testing' || state === 'pending_failure';
  e.runId = waits ? (runRef ?? e.runId) : null;
  e.proofRunId = state === 'tests_passed' ? (runRef ?? e.proofRunId) : null;
  if (isAside(ctx.s, e) !== wasAside) {
    ctx.lineEpoch += 1;
    noteChangeAt(ctx, e.number);
  }
  ctx.actions.push({
    type: 'report_pr_state',
    prNumber: e.number,
    headSha: e.headSha,
    state,
    reason,
    runId: e.runId ?? e.proofRunId,
  });
}

/**
 * busyOrdered's answer and whether it was handed out since it last changed: one handed out may be being
 * walked, so a change makes a new list (ownBusyCache) instead of writing into it.
 */
interface BusyCache {
  entries: PrEntry[];
  end: number;
  shared: boolean;
}

/** The cache, the context's own to change (a new one when the one there was handed out). */
function ownBusyCache(ctx: Ctx, cache: BusyCache): BusyCache {
  if (!cache.shared) return cache;
  ctx.busyCache = { entries: cache.entries.slice(), end: cache.end, shared: false };
  return ctx.busyCache;
}

/**
 * Keep busyOrdered's answer when a PR leaves the busy states without moving in the order: the same list
 * without it, unless it was the last (the end moves). A PR joining them is found again.
 */
function leaveOrJoinBusy(ctx: Ctx, e: PrEntry, joins: boolean): void {
  const cache = ctx.busyCache;
  if (cache === null) return;
  const at = joins ? -1 : busyIndex(ctx, cache, e);
  if (at < 0 || at === cache.entries.length - 1) {
    ctx.busyCache = null;
    return;
  }
  ownBusyCache(ctx, cache).entries.splice(at, 1);
}

/** cache.entries.indexOf(e), looked for from where the last one was found (ctx.busyAt) first. */
function busyIndex(ctx: Ctx, cache: BusyCache, e: PrEntry): number {
  const { entries } = cache;
  const hint = ctx.busyAt;
  let at = hint < entries.length ? entries.indexOf(e, hint) : -1;
  if (at < 0 && hint > 0) at = entries.lastIndexOf(e, Math.min(hint, entries.length) - 1);
  if (at >= 0) ctx.busyAt = at;
  return at;
}

/** What staleReason tells apart in a PR's state: queued (pending or busy), not_ready, merged, or left. */
function staleKind(state: PrState): number {
  if (state === 'not_ready') return 1;
  if (state === 'merged') return 2;
  return state === 'failed' || state === 'cancelled' ? 3 : 0;
}

/** A change at PR n's place in the order (anywhere when it is not in the order). */
function noteChangeAt(ctx: Ctx, n: number): void {
  ctx.changes.push(Math.max(0, ctx.s.order.indexOf(n)));
}

/**
 * Ask the forge to merge a PR onto the target's tip, the history its proof was made on (a passing run's,
 * or with `direct` the PR's own base); one merge at a time.
 */
export function askToMerge(ctx: Ctx, e: PrEntry, direct: boolean): void {
  const { s } = ctx;
  s.merging = { prNumber: e.number, direct };
  ctx.actions.push({
    type: 'merge_pr',
    prNumber: e.number,
    method: s.settings.mergeMethod,
    expectedHeadSha: e.headSha,
    expectedTargetSha: s.targetHead,
    direct,
  });
}

/** Entries of the admitted PRs, in queue order. */
export function ordered(s: QueueState): PrEntry[] {
  return s.order.map((n) => pr(s, n));
}

/** Whether the queue may start test runs now (statemachine.md §1 capability matrix). */
export function canStartRuns(s: QueueState): boolean {
  return s.requested !== 'paused' && s.pendingMode === null;
}

/** Whether tested PRs may merge now. */
export function canMerge(s: QueueState): boolean {
  return s.requested !== 'paused';
}

/** Whether not_ready PRs may be admitted now. */
export function canAdmit(s: QueueState): boolean {
  return s.requested === 'running' && s.pendingMode === null;
}
