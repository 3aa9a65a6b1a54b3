import { findPr, isAside, pr } from './context.ts';
import type { LineageEntry, PrEntry, QueueState, TestRun } from './types.ts';

/** Whether two PRs must be tested one on top of the other (always in single mode). */
export function overlaps(s: QueueState, a: PrEntry, b: PrEntry): boolean {
  if (s.settings.mode === 'single') return true;
  const ta = a.impactedTargets?.targets;
  const tb = b.impactedTargets?.targets;
  if (ta === undefined || tb === undefined || ta === 'ALL' || tb === 'ALL') return true;
  return ta.some((t) => tb.includes(t));
}

/**
 * Unmerged PRs ahead of a group that its test branch must contain, in queue order (PRs set aside for
 * bisection are out of the line): everything ahead in single mode; in parallel mode the PRs ahead whose targets overlap the group's, transitively (walking
 * back from the group's last PR, a PR joins when it overlaps a PR found already or a group member
 * behind it).
 */
export function depsOfGroup(s: QueueState, group: readonly number[]): number[] {
  let start = -1;
  const members = group.map((n) => {
    const at = s.order.indexOf(n);
    if (at > start) start = at;
    return { e: pr(s, n), at };
  });
  if (start < 0) return [];
  const inGroup = new Set(group);
  const found: number[] = [];
  if (s.settings.mode === 'single') {
    for (let i = 0; i < start; i += 1) {
      const n = s.order[i] as number;
      if (!inGroup.has(n) && !isAside(s, pr(s, n))) found.push(n);
    }
    return found;
  }
  const reach: PrEntry[] = [];
  for (let i = start - 1; i >= 0; i -= 1) {
    const n = s.order[i] as number;
    if (inGroup.has(n)) continue;
    const candidate = pr(s, n);
    if (isAside(s, candidate)) continue;
    const joins =
      reach.some((r) => overlaps(s, candidate, r)) ||
      members.some((m) => m.at > i && overlaps(s, candidate, m.e));
    if (joins) {
      found.push(n);
      reach.push(candidate);
    }
  }
  return found.reverse();
}

export function depsOf(s: QueueState, n: number): number[] {
  return depsOfGroup(s, [n]);
}

/** PRs our queue merged onto the target after sha, or null when sha is not in the known history. */
export function mergedSince(s: QueueState, sha: string): number[] | null {
  const { lineage } = s;
  let i = 0;
  while (i < lineage.length && (lineage[i] as LineageEntry).sha !== sha) i += 1;
  if (i === lineage.length) return null;
  const merged: number[] = [];
  for (let k = i + 1; k < lineage.length; k += 1) {
    const n = (lineage[k] as LineageEntry).prNumber;
    if (n !== null) merged.push(n);
  }
  return merged;
}

/**
 * Why a run no longer tests what would be merged (its predicted base changed), or null if it still does.
 * A bisection segment is tested in the line like any run and judged the same way.
 * `line`, when given, is the queue's line as it is now: the PRs of the order that are not aside, in
 * order, at least as far as the last busy PR (invalidateStale builds it once for all the runs it checks).
 */
export function staleReason(s: QueueState, run: TestRun, line?: readonly number[]): string | null {
  const merged = mergedSince(s, run.baseSha);
  if (merged === null) return `target branch ${s.branch} moved outside the queue; retesting on the new head`;
  const { dependsOn: deps, tested } = run;
  const live: number[] = [];
  for (const n of tested) if (isQueued(s, n)) live.push(n);
  for (const m of merged) {
    const me = findPr(s, m);
    if (deps.includes(m) || tested.includes(m) || me === undefined) continue;
    if (live.length === 0 || overlapsAny(s, me, live))
      return `PR #${m} merged ahead of it; retesting on the new head`;
  }
  // Our merges must land in the order the run's branch holds them (a PR moved for bisection may not).
  let k = 0;
  for (const m of merged) {
    if (!deps.includes(m) && !tested.includes(m)) continue;
    const held = k < deps.length ? deps[k] : tested[k - deps.length];
    if (held !== m) return `PR #${m} merged out of the order it was tested in; retesting`;
    k += 1;
  }
  if (live.length === 0) return null;
  for (const n of tested) {
    const state = pr(s, n).state;
    if (state === 'failed' || state === 'cancelled') return `PR #${n} tested with it left the queue`;
  }
  // The usual case, without building lists: the PRs ahead are exactly those the run was built on
  // (all still queued, so none merged: the order holds no merged PR).
  const onLine = s.settings.mode === 'single' && line !== undefined ? lineStart(line, live) : -1;
  if (s.settings.mode === 'single') {
    if (onLine >= 0 ? aheadOnLine(s, line as number[], onLine, live, deps) : aheadInSingleMode(s, live, deps))
      return null;
  }
  // (Single mode, every PR of the group on the line: what depsOfGroup would find, without looking again.)
  const expected = onLine >= 0 ? lineAhead(line as number[], onLine, live) : depsOfGroup(s, live);
  if (sameList(deps, expected)) return null;
  const actual = deps.filter((n) => pr(s, n).state !== 'merged');
  const expectedSet = new Set(expected);
  const left = actual.find((n) => !expectedSet.has(n));
  if (left !== undefined) return `PR #${left} ahead of it left the queue`;
  // Both lists are free of duplicates and actual is within expected: equal sizes mean equal sets.
  if (actual.length === expected.length) return null;
  const actualSet = new Set(actual);
  const added = expected.find((n) => !actualSet.has(n));
  if (added !== undefined) return `PR #${added} was queued ahead of it`;
  return null;
}

/**
 * Whether a PR is in the queue order: admitted and not ended. setPrState keeps the order so (it takes
 * out PRs that end or go back to not_ready; admitReady puts them in as pending), so the entry's state
 * answers without a scan of the order.
 */
export function isQueued(s: QueueState, n: number): boolean {
  const e = findPr(s, n);
  if (e === undefined) return false;
  const state = e.state;
  return state !== 'not_ready' && state !== 'merged' && state !== 'failed' && state !== 'cancelled';
}

function overlapsAny(s: QueueState, me: PrEntry, prs: readonly number[]): boolean {
  for (const n of prs) if (overlaps(s, me, pr(s, n))) return true;
  return false;
}

/** The index on the line of the group's last PR, or -1 when a PR of the group is not on the line. */
function lineStart(line: readonly number[], group: readonly number[]): number {
  let start = -1;
  for (const n of group) {
    const at = line.indexOf(n);
    if (at < 0) return -1;
    if (at > start) start = at;
  }
  return start;
}

/** The PRs of the line ahead of index `start` that are not in the group (single mode's dependencies). */
function lineAhead(line: readonly number[], start: number, group: readonly number[]): number[] {
  const ahead: number[] = [];
  for (let i = 0; i < start; i += 1) {
    const n = line[i] as number;
    if (!group.includes(n)) ahead.push(n);
  }
  return ahead;
}

/**
 * aheadInSingleMode on the line (the order without the PRs aside), which holds every PR of the group,
 * the last at index `start`: whether `deps` without its merged PRs is the line ahead of it without the group.
 */
function aheadOnLine(
  s: QueueState,
  line: readonly number[],
  start: number,
  group: readonly number[],
  deps: readonly number[],
): boolean {
  let k = 0;
  for (let i = 0; i < start; i += 1) {
    const n = line[i] as number;
    if (group.includes(n)) continue;
    if (deps[k] !== n) k = skipMerged(s, deps, k);
    if (deps[k] !== n) return false;
    k += 1;
  }
  return skipMerged(s, deps, k) === deps.length;
}

/** The first index from k on whose PR is not merged (or deps.length). */
function skipMerged(s: QueueState, deps: readonly number[], k: number): number {
  let i = k;
  while (i < deps.length && findPr(s, deps[i] as number)?.state === 'merged') i += 1;
  return i;
}

/**
 * Whether `deps` without its merged PRs is, in order, every PR ahead of the group's last queued member
 * that is not in the group (single mode). A PR still queued is not merged (the order holds none), so
 * only the entries that differ are looked up.
 */
function aheadInSingleMode(s: QueueState, group: readonly number[], deps: readonly number[]): boolean {
  let start = -1;
  for (const n of group) start = Math.max(start, s.order.indexOf(n));
  let k = 0;
  for (let i = 0; i < start; i += 1) {
    const n = s.order[i] as number;
    if (group.includes(n) || isAside(s, pr(s, n))) continue;
    if (deps[k] !== n) k = skipMerged(s, deps, k);
    if (deps[k] !== n) return false;
    k += 1;
  }
  return skipMerged(s, deps, k) === deps.length;
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}

/** Queue order of two PRs: priority (0 highest), then submission order. */
export function comparePriority(a: PrEntry, b: PrEntry): number {
  return a.priorityValue - b.priorityValue || a.seq - b.seq;
}

/**
 * Where an admitted PR joins the queue. Urgent PRs go ahead of everything except other urgent PRs and
 * PRs that already passed at the head; others only overtake pending PRs of lower priority. `settled`
 * is the index after the last PR in the order that is not pending (the order holds only pending and
 * busy PRs: setPrState takes out the others), which busyOrdered tracks.
 */
export function insertPosition(s: QueueState, e: PrEntry, settled: number): number {
  const { order } = s;
  if (e.priorityValue === 0) {
    for (let i = 0; i < order.length; i += 1) {
      const o = pr(s, order[i] as number);
      if (o.priorityValue !== 0 && o.state !== 'tests_passed' && s.merging?.prNumber !== o.number) return i;
    }
    return order.length;
  }
  for (let i = settled; i < order.length; i += 1) {
    if (comparePriority(e, pr(s, order[i] as number)) < 0) return i;
  }
  return order.length;
}
