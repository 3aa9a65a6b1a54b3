import type { QueueAction } from './actions.ts';
import { admitReady, completeModeSwitch, explainWaiting } from './admission.ts';
import { advanceBisections, startSegments } from './bisect.ts';
import { type Ctx, newCtx, rememberIndexes } from './context.ts';
import type { QueueEvent } from './events.ts';
import {
  onCancelled,
  onHeadChecks,
  onHeadUpdated,
  onImpactedTargets,
  onReadinessChanged,
  onRestartRequested,
  onSubmitted,
} from './handlers-pr.ts';
import { expireRuns, onBranchBuilt, onBranchFailed, onCiReported } from './handlers-run.ts';
import {
  onMergeFailed,
  onMergeSucceeded,
  onRequiredStatusesDiscovered,
  onSettingsUpdated,
  onTargetMoved,
} from './handlers-target.ts';
import { invalidateStale, resolveFailures } from './resolve.ts';
import { cleanupRuns, mergeNext, startRuns } from './schedule.ts';
import type { QueueState } from './types.ts';

export interface StepResult {
  state: QueueState;
  actions: QueueAction[];
}

/** Bound on reconciliation rounds; each round either changes something or ends the loop. */
const MAX_ROUNDS = 100;

/**
 * The engine: apply one event at time `now` (epoch ms) and return the new state and the actions to
 * carry out. Pure: the input state is not modified, and the same inputs give the same outputs.
 */
export function step(state: QueueState, event: QueueEvent, now: number): StepResult {
  const ctx = newCtx(copyState(state), now, state.prs);
  apply(ctx, event);
  reconcile(ctx);
  rememberIndexes(ctx);
  return { state: ctx.s, actions: compactReports(ctx.actions, state) };
}

/**
 * A copy of the state whose containers are the step's own and whose PR entries and runs are shared
 * with the input until written (context.ts: writablePr, writableRun). Copying the containers is cheap
 * (the PR map is two arrays: lib/int-map.ts); copying every entry was most of a
 * step's cost with a long queue. Nothing else in the state is written in place: lineage entries,
 * history entries, checks, targets and node PR lists are replaced, never changed.
 */
function copyState(state: QueueState): QueueState {
  return {
    ...state,
    settings: { ...state.settings },
    requiredStatuses: { ...state.requiredStatuses },
    lineage: [...state.lineage],
    prs: state.prs.copy(),
    order: [...state.order],
    runs: { ...state.runs },
    bisections: state.bisections.map((b) => ({ ...b, nodes: b.nodes.map((n) => ({ ...n })) })),
    merging: state.merging === null ? null : { ...state.merging },
  };
}

type Handlers = { [T in QueueEvent['type']]: (ctx: Ctx, ev: Extract<QueueEvent, { type: T }>) => void };

/** One handler per event type; each records the event's direct effect, reconcile does the rest. */
const HANDLERS: Handlers = {
  pr_submitted: onSubmitted,
  pr_readiness_changed: onReadinessChanged,
  pr_head_updated: onHeadUpdated,
  pr_checks_reported: onHeadChecks,
  pr_cancelled: onCancelled,
  impacted_targets_set: onImpactedTargets,
  pr_restart_requested: onRestartRequested,
  test_branch_built: onBranchBuilt,
  test_branch_failed: onBranchFailed,
  ci_reported: onCiReported,
  merge_succeeded: onMergeSucceeded,
  merge_failed: onMergeFailed,
  target_moved: onTargetMoved,
  tick: () => {},
  settings_updated: onSettingsUpdated,
  required_statuses_discovered: onRequiredStatusesDiscovered,
};

function apply<T extends QueueEvent['type']>(ctx: Ctx, ev: Extract<QueueEvent, { type: T }>): void {
  const handler = HANDLERS[ev.type as T] as (ctx: Ctx, ev: QueueEvent) => void;
  handler(ctx, ev);
}

/**
 * Bring the queue to a consistent state: restart stale runs, settle failures, admit, merge, start; then
 * start bisection segments in their own pool, on the target branch.
 */
function reconcile(ctx: Ctx): void {
  const rounds = [
    expireRuns,
    invalidateStale,
    resolveFailures,
    advanceBisections,
    completeModeSwitch,
    admitReady,
    explainWaiting,
    mergeNext,
    startRuns,
    cleanupRuns,
  ];
  for (let i = 0; i < MAX_ROUNDS; i += 1) {
    const changed = rounds.map((round) => round(ctx));
    if (!changed.includes(true) && !startSegments(ctx)) return;
  }
  throw new Error('merge queue: reconciliation did not settle');
}

/** Keep one state report per PR (its last) and drop it when the PR ends the step where it began. */
function compactReports(actions: QueueAction[], before: QueueState): QueueAction[] {
  const last = new Map<number, QueueAction>();
  for (const a of actions) if (a.type === 'report_pr_state') last.set(a.prNumber, a);
  return actions.filter((a) => {
    if (a.type !== 'report_pr_state') return true;
    if (last.get(a.prNumber) !== a) return false;
    const prev = before.prs.get(a.prNumber);
    const prevRun = prev ? (prev.runId ?? prev.proofRunId) : null;
    return !(prev && prev.state === a.state && prevRun === a.runId && prev.headSha === a.headSha);
  });
}
