import { findPr, isAside, pr } from './context.ts';
import type { PrEntry, QueueState, TestRun } from './types.ts';

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
  const i = s.lineage.findIndex((l) => l.sha === sha);
  if (i < 0) return null;
  return s.lineage.slice(i + 1).flatMap((l) => (l.prNumber === null ? [] : [l.prNumber]));
}

/**
 * Why a run no longer tests what would be merged (its predicted base changed), or null if it still does.
 * A bisection segment is tested in the line like any run and judged the same way.
 */
export function staleReason(s: QueueState, run: TestRun): string | null {
  const merged = mergedSince(s, run.baseSha);
  if (merged === null) return `target branch ${s.branch} moved outside the queue; retesting on the new head`;
  const live = run.tested.filter((n) => s.order.includes(n));
  const alien = merged.find((m) => {
    const me = findPr(s, m);
    if (run.dependsOn.includes(m) || run.tested.includes(m) || me === undefined) return false;
    return live.length === 0 || live.some((n) => overlaps(s, me, pr(s, n)));
  });
  if (alien !== undefined) return `PR #${alien} merged ahead of it; retesting on the new head`;
  // Our merges must land in the order the run's branch holds them (a PR moved for bisection may not).
  const held = [...run.dependsOn, ...run.tested];
  const ours = merged.filter((m) => held.includes(m));
  const swapped = ours.findIndex((m, i) => held[i] !== m);
  if (swapped >= 0) return `PR #${ours[swapped]} merged out of the order it was tested in; retesting`;
  if (live.length === 0) return null;
  const gone = run.tested.find((n) => ['failed', 'cancelled'].includes(pr(s, n).state));
  if (gone !== undefined) return `PR #${gone} tested with it left the queue`;
  // The usual case, without building lists: the PRs ahead are exactly those the run was built on
  // (all still queued, so none merged: the order holds no merged PR).
  if (s.settings.mode === 'single' && aheadInSingleMode(s, live, run.dependsOn)) return null;
  const expected = depsOfGroup(s, live);
  if (sameList(run.dependsOn, expected)) return null;
  const actual = run.dependsOn.filter((n) => pr(s, n).state !== 'merged');
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
 * Whether `deps` without its merged PRs is, in order, every PR ahead of the group's last queued member
 * that is not in the group (single mode). A PR still queued is not merged (the order holds none), so
 * only the entries that differ are looked up.
 */
function aheadInSingleMode(s: QueueState, group: readonly number[], deps: readonly number[]): boolean {
  let start = -1;
  for (const n of group) start = Math.max(start, s.order.indexOf(n));
  let k = 0;
  const skipMerged = () => {
    while (k < deps.length && findPr(s, deps[k] as number)?.state === 'merged') k += 1;
  };
  for (let i = 0; i < start; i += 1) {
    const n = s.order[i] as number;
    if (group.includes(n) || isAside(s, pr(s, n))) continue;
    if (deps[k] !== n) skipMerged();
    if (deps[k] !== n) return false;
    k += 1;
  }
  skipMerged();
  return k === deps.length;
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
