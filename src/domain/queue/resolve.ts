import { bisectionOf, startBisection } from './bisect.ts';
import { asideWalk, busyOrdered, type Ctx, findRun, isAside, ordered, pr, setPrState } from './context.ts';
import { depsOf, type Line, mergedSince, staleReason } from './graph.ts';
import { supersede } from './handlers-pr.ts';
import type { ImpactedTargets, PrEntry, TestRun } from './types.ts';

/**
 * Runs whose predicted base changed are superseded; their PRs go back to pending (restart).
 * A run found current earlier in the step is not looked at again while nothing its staleness reads has
 * changed: the order and the entries up to its last PR (ctx.changes), the runs its PRs wait on, the
 * mode. The lineage, the heads and the targets change only in the event's handler, before any check.
 */
export function invalidateStale(ctx: Ctx): boolean {
  // Only busy PRs refer to runs (setPrState clears runId and proofRunId in every other state).
  const ids = new Set<string>();
  const asideOn = new Set<string>();
  const { entries, end } = busyOrdered(ctx);
  // The PRs of a batch are next to each other and wait on the same run in the same state: the same
  // answer, looked up once.
  let last: PrEntry | undefined;
  for (const e of entries) {
    const same = last !== undefined && e.runId === last.runId && e.state === last.state;
    if (e.runId !== null && !same) (isAside(ctx.s, e) ? asideOn : ids).add(e.runId);
    if (e.proofRunId !== null) ids.add(e.proofRunId);
    last = e;
  }
  if (ids.size === 0 && asideOn.size === 0) return false;
  let changed = false;
  // The line every run is checked against, built again only when a restart changed it.
  let line: Line | undefined;
  let lineAt = -1;
  const check = (run: TestRun): string | null => {
    if (isCurrent(ctx, run.id)) return null;
    if (line === undefined || lineAt !== ctx.lineEpoch) {
      line = queueLine(ctx);
      lineAt = ctx.lineEpoch;
    }
    const reason = staleReason(ctx.s, run, line, mergedSinceKept(ctx, run.baseSha));
    if (reason === null && allBusy(ctx, run))
      ctx.current.set(run.id, { at: ctx.changes.length, upTo: end - 1 });
    return reason;
  };
  for (const id of ids) changed = restartIfStale(ctx, id, ids, check) || changed;
  for (const id of asideOn) changed = restartIfStale(ctx, id, ids, check) || changed;
  return changed;
}

/**
 * A main run startRuns just created for `group` on the line as it is (dependsOn: the PRs ahead of it
 * there) is current: record it as invalidateStale would after checking it, so that the next round does
 * not check it again while nothing changes at or ahead of its last PR (`upTo`, its index in the order).
 * Only when its base is the target's tip with nothing merged since (always, as the lineage ends there).
 */
export function createdCurrent(ctx: Ctx, run: TestRun, upTo: number): void {
  const merged = mergedSinceKept(ctx, run.baseSha);
  if (merged === null || merged.length > 0 || !allBusy(ctx, run)) return;
  ctx.current.set(run.id, { at: ctx.changes.length, upTo });
}

/** Whether a run found current has stayed so: nothing changed at or ahead of its last PR since. */
function isCurrent(ctx: Ctx, id: string): boolean {
  const found = ctx.current.get(id);
  if (found === undefined) return false;
  const { changes } = ctx;
  for (let j = found.at; j < changes.length; j += 1) if ((changes[j] as number) <= found.upTo) return false;
  found.at = changes.length;
  return true;
}

/**
 * Whether every PR a run tests is busy (so in the order, ahead of busyOrdered's end): a PR outside the
 * order could come back anywhere and change what the run must hold.
 */
function allBusy(ctx: Ctx, run: TestRun): boolean {
  for (const n of run.tested) if (!ctx.busy.has(n)) return false;
  return true;
}

function restartIfStale(
  ctx: Ctx,
  id: string,
  ids: ReadonlySet<string>,
  check: (run: TestRun) => string | null,
): boolean {
  const run = findRun(ctx.s, id);
  // PRs aside wait on their failed batch run: only a move of the target outside the queue ends that.
  const reason = !run
    ? 'its test run is gone'
    : ids.has(id)
      ? check(run)
      : mergedSinceKept(ctx, run.baseSha) === null
        ? `target branch ${ctx.s.branch} moved outside the queue; retesting on the new head`
        : null;
  if (reason === null) return false;
  supersede(ctx, id, reason);
  return true;
}

/** The PRs of the order that are not aside, in order, as far as the last busy PR. */
function queueLine(ctx: Ctx): Line {
  const { s } = ctx;
  const { end } = busyOrdered(ctx);
  const prs: number[] = [];
  const aside = asideWalk(s);
  if (s.settings.mode === 'single') {
    for (let i = 0; i < end; i += 1) {
      const n = s.order[i] as number;
      if (!aside(pr(s, n))) prs.push(n);
    }
    return { prs, from: 0 };
  }
  const targets: (ImpactedTargets | undefined)[] = [];
  for (let i = 0; i < end; i += 1) {
    const n = s.order[i] as number;
    const e = pr(s, n);
    if (aside(e)) continue;
    prs.push(n);
    targets.push(e.impactedTargets?.targets);
  }
  return { prs, from: 0, targets };
}

/**
 * mergedSince, kept per base commit while the lineage stays the same (only the event's handler changes
 * it; kept by its identity and length all the same). Read-only: staleReason does not change it.
 */
function mergedSinceKept(ctx: Ctx, sha: string): number[] | null {
  const { lineage } = ctx.s;
  let kept = ctx.mergedSince;
  if (kept === null || kept.lineage !== lineage || kept.length !== lineage.length) {
    kept = { lineage, length: lineage.length, bySha: new Map() };
    ctx.mergedSince = kept;
  }
  let merged = kept.bySha.get(sha);
  if (merged === undefined) {
    merged = mergedSince(ctx.s, sha);
    kept.bySha.set(sha, merged);
  }
  return merged;
}

/** Failed main runs whose PRs wait in pending_failure, with their waiting PRs. */
function failedGroups(ctx: Ctx): { run: TestRun; members: PrEntry[] }[] {
  const groups = new Map<string, PrEntry[]>();
  for (const e of busyOrdered(ctx).entries) {
    if (e.state !== 'pending_failure' || e.runId === null) continue;
    groups.set(e.runId, [...(groups.get(e.runId) ?? []), e]);
  }
  return [...groups].flatMap(([id, members]) => {
    const run = findRun(ctx.s, id);
    return run && !bisectionOf(ctx, id) ? [{ run, members }] : [];
  });
}

/** Pending-failure resolution (statemachine.md §4): wait, or treat the group as the culprit. */
export function resolveFailures(ctx: Ctx): boolean {
  let changed = false;
  for (const { run, members } of failedGroups(ctx)) {
    if (staleReason(ctx.s, run) !== null || mustWait(ctx, run)) continue;
    blame(ctx, run, members);
    changed = true;
  }
  return changed;
}

/** Wait while a PR ahead is unresolved, or while successors within pendingFailureDepth still test. */
function mustWait(ctx: Ctx, run: TestRun): boolean {
  const unsettled = ['pending', 'testing', 'pending_failure'];
  if (run.dependsOn.some((n) => unsettled.includes(pr(ctx.s, n).state))) return true;
  const depth = ctx.s.settings.pendingFailureDepth;
  if (depth === 0 || run.failure?.kind === 'conflict' || run.failure?.kind === 'build_error') return false;
  return successorGroups(ctx, run, depth).some((g) =>
    g.some((e) => e.state === 'pending' || e.state === 'testing'),
  );
}

/** The first `depth` groups behind a run whose test branches contain all of its PRs. */
function successorGroups(ctx: Ctx, run: TestRun, depth: number): PrEntry[][] {
  const last = Math.max(...run.tested.map((n) => ctx.s.order.indexOf(n)));
  const groups = new Map<string, PrEntry[]>();
  for (const e of ordered(ctx.s).slice(last + 1)) {
    if (isAside(ctx.s, e)) continue;
    const deps = depsOf(ctx.s, e.number);
    if (!run.tested.every((n) => deps.includes(n))) continue;
    const key = e.runId ?? e.proofRunId ?? `pr-${e.number}`;
    if (!groups.has(key) && groups.size >= depth) break;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  return [...groups.values()];
}

/** The failed group is at fault: a conflicting PR or a single PR fails; a batch is bisected. */
function blame(ctx: Ctx, run: TestRun, members: PrEntry[]): void {
  const reason = run.failure?.reason ?? 'tests failed';
  const conflict = run.failure?.conflictPr ?? null;
  if (conflict !== null) {
    for (const e of members) {
      if (e.number === conflict) setPrState(ctx, e, 'failed', reason);
      else setPrState(ctx, e, 'pending', `retesting without PR #${conflict} (merge conflict)`);
    }
    return;
  }
  const [only] = members;
  if (members.length === 1 && only) {
    setPrState(ctx, only, 'failed', `${reason} (test run ${run.id})`);
    return;
  }
  startBisection(
    ctx,
    run,
    members.map((e) => e.number),
  );
}
