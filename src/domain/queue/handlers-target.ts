import { hasInFlight, switchMode } from './admission.ts';
import { type Ctx, findPr, isTerminal, setPrState } from './context.ts';
import type { QueueEvent, SettingsPatch } from './events.ts';
import type { QueueSettings, QueueState, TestRun } from './types.ts';

type Ev<T extends QueueEvent['type']> = Extract<QueueEvent, { type: T }>;

/** Our merge landed: the target advances along the history our runs were built on. */
export function onMergeSucceeded(ctx: Ctx, ev: Ev<'merge_succeeded'>): void {
  const { s } = ctx;
  const e = findPr(s, ev.prNumber);
  if (!e || e.state === 'merged') return;
  const direct = s.merging?.prNumber === ev.prNumber && s.merging.direct;
  if (s.merging?.prNumber === ev.prNumber) s.merging = null;
  s.lineage.push({ sha: ev.newTargetSha, prNumber: e.number });
  if (s.lineage.length > LINEAGE_KEPT) trimLineage(ctx);
  s.targetHead = ev.newTargetSha;
  const how = direct ? 'merged directly: up to date with the target and nothing queued ahead' : 'merged';
  const late = isTerminal(e.state) ? ` (the merge was already under way when it was ${e.state})` : '';
  setPrState(ctx, e, 'merged', `${how} into ${s.branch} with ${s.settings.mergeMethod}${late}`);
  // A push from outside landed while our merge was in flight. The forge merged onto the tip it found,
  // so newTargetSha holds that push if it came first (and the next poll reports it if it came later):
  // either way the history our runs were built on is gone, and the tip is our merge, not the push.
  const deferred = s.deferredTargetSha;
  s.deferredTargetSha = null;
  if (deferred !== null && deferred !== ev.newTargetSha) movedOutside(ctx, ev.newTargetSha);
}

export function onMergeFailed(ctx: Ctx, ev: Ev<'merge_failed'>): void {
  const { s } = ctx;
  if (s.merging?.prNumber !== ev.prNumber) return;
  s.merging = null;
  if (ev.targetMovedTo !== undefined) {
    // The forge refused because someone pushed to the target after we decided to merge: the PR did
    // nothing wrong, but its proof was made on a history that is gone. As for any outside push, the
    // runs built on the old history go stale and the PR is tested again on the new tip. The forge
    // read that tip when it refused, so it is newer than a push deferred while the merge was in flight.
    s.deferredTargetSha = null;
    movedOutside(ctx, ev.targetMovedTo);
    return;
  }
  const e = findPr(s, ev.prNumber);
  if (e && !isTerminal(e.state)) setPrState(ctx, e, 'failed', `merge failed: ${ev.reason}`);
  applyDeferredPush(ctx);
}

/**
 * Merges remembered at most, beyond those a run still builds on. The lineage is read and saved with
 * every event, and a queue that only ever merges its own PRs would otherwise keep every merge forever.
 * Forgetting an old entry is conservative: a run based on it would read as stale (tested again), and a
 * late report of that commit as a push from outside (runs built on the old history restart).
 */
export const LINEAGE_KEPT = 200;

/** Drops the oldest entries beyond LINEAGE_KEPT, keeping every one a run in the state is based on. */
function trimLineage(ctx: Ctx): void {
  const { s } = ctx;
  let from = s.lineage.length - LINEAGE_KEPT;
  const at = new Map<string, number>();
  for (let i = 0; i < from; i += 1) at.set((s.lineage[i] as { sha: string }).sha, i);
  const bisected = new Set(s.bisections.map((b) => b.parentRunId));
  for (const run of Object.values(s.runs)) {
    const i = at.get(run.baseSha);
    if (i === undefined || i >= from || !runMatters(s, run, bisected)) continue;
    from = i;
  }
  if (from > 0) s.lineage = s.lineage.slice(from);
}

/**
 * A run still in flight, one that passed for a PR not merged yet (it may still merge on its proof), or
 * a failed batch under bisection: its PRs aside wait on it until their segments are proven, and a base
 * no longer in the lineage reads as a push from outside the queue (resolve.ts: restartIfStale), which
 * would stop the bisection and send them back to the line.
 */
function runMatters(s: QueueState, run: TestRun, bisected: ReadonlySet<string>): boolean {
  if (run.status === 'building' || run.status === 'in_progress') return true;
  if (bisected.has(run.id)) return true;
  return run.status === 'succeeded' && run.tested.some((n) => !isTerminalPr(s, n));
}

function isTerminalPr(s: QueueState, n: number): boolean {
  const e = findPr(s, n);
  return e === undefined || isTerminal(e.state);
}

/** A push to the target: ours if already known; judged later while a merge is in flight; else outside. */
export function onTargetMoved(ctx: Ctx, ev: Ev<'target_moved'>): void {
  const { s } = ctx;
  if (s.lineage.some((l) => l.sha === ev.sha)) return;
  if (s.merging !== null) {
    s.deferredTargetSha = ev.sha;
    return;
  }
  movedOutside(ctx, ev.sha);
}

/** Our merge failed: a push seen meanwhile is the target's new tip. */
function applyDeferredPush(ctx: Ctx): void {
  const deferred = ctx.s.deferredTargetSha;
  ctx.s.deferredTargetSha = null;
  if (deferred !== null) movedOutside(ctx, deferred);
}

/** The target moved outside the queue: every run built on the old history becomes stale. */
function movedOutside(ctx: Ctx, sha: string): void {
  ctx.s.targetHead = sha;
  ctx.s.lineage = [{ sha, prNumber: null }];
}

const PLAIN_SETTINGS = [
  'concurrency',
  'bisectionConcurrency',
  'testingTimeoutMinutes',
  'canOptimisticallyMerge',
  'pendingFailureDepth',
  'batch',
  'batchingMaxWaitTimeMinutes',
  'batchingMinSize',
  'batchingMaxSize',
  'createPrsForTestingBranches',
  'commentsEnabled',
  'commandsEnabled',
  'statusCheckEnabled',
  'directMergeMode',
  'optimizationMode',
  'mergeMethod',
  'testBranchPrefix',
] as const satisfies readonly (keyof QueueSettings & keyof SettingsPatch)[];

/**
 * updateQueue: plain settings, requested state, required statuses, and a mode change, in that order.
 * A requested state is the queue's state from now on, also while a mode switch waits for the PRs in
 * flight: paused and draining keep the switch waiting (neither admits PRs, so it still completes, and
 * the queue stays in that state after it); running ends the switch, since running admits PRs in the
 * current mode, which a switch forbids. A mode sent in the same request applies after the state, so
 * `{state: running, mode: X}` with PRs in flight is a switch that resumes running.
 */
export function onSettingsUpdated(ctx: Ctx, ev: Ev<'settings_updated'>): void {
  const { s } = ctx;
  const { patch } = ev;
  const given = PLAIN_SETTINGS.filter((key) => patch[key] !== undefined).map((key) => [key, patch[key]]);
  Object.assign(s.settings, Object.fromEntries(given));
  if (patch.state !== undefined) {
    s.requested = patch.state;
    if (patch.state === 'running') s.pendingMode = null;
  }
  if (patch.deleteRequiredStatuses) s.requiredStatuses.mergeInstance = null;
  if (patch.requiredStatuses !== undefined) s.requiredStatuses.mergeInstance = [...patch.requiredStatuses];
  if (patch.mode === undefined) return;
  if (patch.mode === s.settings.mode) s.pendingMode = null;
  else if (hasInFlight(ctx)) s.pendingMode = patch.mode;
  else switchMode(ctx, patch.mode);
}

export function onRequiredStatusesDiscovered(ctx: Ctx, ev: Ev<'required_statuses_discovered'>): void {
  const r = ctx.s.requiredStatuses;
  if (ev.serviceConfig !== undefined)
    r.serviceConfig = ev.serviceConfig === null ? null : [...ev.serviceConfig];
  if (ev.branchProtection !== undefined) {
    r.branchProtection = ev.branchProtection === null ? null : [...ev.branchProtection];
  }
}
