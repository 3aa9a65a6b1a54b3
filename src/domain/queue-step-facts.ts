// What one merge-queue engine step did that an operator counts: submissions, PRs starting their first
// test, PRs leaving the queue (and how long they waited and tested), test runs ending. Pure: the
// metrics (src/app/queue/metrics.ts) and anything else that watches the queue read these facts.
import type { PrEntry, PrState, QueueState, RunStatus, TestRun } from './queue/index.ts';

export type LeftState = Extract<PrState, 'merged' | 'failed' | 'cancelled'>;
export type RunEnd = Extract<RunStatus, 'succeeded' | 'failed' | 'cancelled'>;

export interface PrLeft {
  readonly state: LeftState;
  /** From the PR's submission to now. */
  readonly sinceSubmittedMs: number;
  /** From the PR's last move to testing to now; null when it never was tested (cancelled early, direct merge). */
  readonly testingMs: number | null;
}

export interface RunEnded {
  readonly kind: TestRun['kind'];
  readonly status: RunEnd;
  /** From the run's creation (its test branch being built) to now. */
  readonly durationMs: number;
}

export interface QueueStepFacts {
  /** New submissions (a failed or cancelled PR submitted again is a new one). */
  readonly submitted: number;
  /** For each PR whose submission moved to testing for the first time: how long after it was submitted. */
  readonly firstTestingWaitMs: readonly number[];
  readonly left: readonly PrLeft[];
  readonly runsEnded: readonly RunEnded[];
}

const LEFT: readonly PrState[] = ['merged', 'failed', 'cancelled'];
const RUN_ENDS: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];

/**
 * The facts of the step that turned `before` into `after` (as stepped, before pruning) at `now`.
 * Transitions are read from each PR's history, so a step that moves a PR twice (pending, then
 * testing) reports both, and steps at the same millisecond are told apart.
 */
export function queueStepFacts(before: QueueState, after: QueueState, now: number): QueueStepFacts {
  let submitted = 0;
  const firstTestingWaitMs: number[] = [];
  const left: PrLeft[] = [];
  for (const e of after.prs.values()) {
    const was = before.prs.get(e.number);
    const fresh = was === undefined || was.id !== e.id;
    if (fresh) submitted++;
    // The history entries this step added: all of a new submission's, else those after the earlier ones.
    const from = fresh ? 0 : was.history.length;
    let lastTesting = -1;
    for (let i = 0; i < e.history.length; i++) {
      const h = e.history[i] as PrEntry['history'][number];
      if (i >= from && h.state === 'testing' && lastTesting === -1) {
        firstTestingWaitMs.push(h.at - e.submittedAt);
      }
      if (i >= from && LEFT.includes(h.state)) {
        const tested = lastTesting === -1 ? null : (e.history[lastTesting] as { at: number }).at;
        left.push({
          state: h.state as LeftState,
          sinceSubmittedMs: h.at - e.submittedAt,
          testingMs: tested === null ? null : h.at - tested,
        });
      }
      if (h.state === 'testing') lastTesting = i;
    }
  }
  const runsEnded: RunEnded[] = [];
  for (const run of Object.values(after.runs)) {
    const prev = before.runs[run.id]?.status;
    if (RUN_ENDS.includes(run.status) && (prev === undefined || !RUN_ENDS.includes(prev))) {
      runsEnded.push({ kind: run.kind, status: run.status as RunEnd, durationMs: now - run.createdAt });
    }
  }
  return { submitted, firstTestingWaitMs, left, runsEnded };
}
