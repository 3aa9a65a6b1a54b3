import type { QueueAction } from './actions.ts';
import type { PrEntry, PrState, QueueState, TestRun } from './types.ts';

/** Working context of one step: a private copy of the state, the clock value and the actions so far. */
export interface Ctx {
  s: QueueState;
  now: number;
  actions: QueueAction[];
}

export const TERMINAL: readonly PrState[] = ['merged', 'failed', 'cancelled'];

export function isTerminal(state: PrState): boolean {
  return TERMINAL.includes(state);
}

export function findPr(s: QueueState, n: number): PrEntry | undefined {
  return s.prs[String(n)];
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
export function setPrState(ctx: Ctx, e: PrEntry, state: PrState, reason: string, runRef?: string): void {
  e.state = state;
  e.reason = reason;
  e.stateChangedAt = ctx.now;
  e.history.push({ state, at: ctx.now, reason });
  if (isTerminal(state) || state === 'not_ready') {
    ctx.s.order = ctx.s.order.filter((n) => n !== e.number);
  }
  const waits = state === 'testing' || state === 'pending_failure';
  e.runId = waits ? (runRef ?? e.runId) : null;
  e.proofRunId = state === 'tests_passed' ? (runRef ?? e.proofRunId) : null;
  ctx.actions.push({
    type: 'report_pr_state',
    prNumber: e.number,
    headSha: e.headSha,
    state,
    reason,
    runId: e.runId ?? e.proofRunId,
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
