import { findPr, isAside, pr } from './context.ts';
import type { ImpactedTargets, LineageEntry, PrEntry, QueueState, TestRun } from './types.ts';

/** Whether two PRs must be tested one on top of the other (always in single mode). */
export function overlaps(s: QueueState, a: PrEntry, b: PrEntry): boolean {
  if (s.settings.mode === 'single') return true;
  return targetsOverlap(a.impactedTargets?.targets, b.impactedTargets?.targets);
}

/** Parallel mode's overlaps on two PRs' target lists (undefined: the PR uploaded none). */
function targetsOverlap(ta: ImpactedTargets | undefined, tb: ImpactedTargets | undefined): boolean {
  if (ta === undefined || tb === undefined || ta === 'ALL' || tb === 'ALL') return true;
  for (const t of ta) if (tb.includes(t)) return true;
  return false;
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
  if (s.settings.mode === 'single') {
    const inGroup = new Set(group);
    const found: number[] = [];
    for (let i = 0; i < start; i += 1) {
      const n = s.order[i] as number;
      if (!inGroup.has(n) && !isAside(s, pr(s, n))) found.push(n);
    }
    return found;
  }
  return reachBack(s, s.order, start, group, members, true);
}

/**
 * Parallel mode's walk of depsOfGroup over `seq` (the order, or the line: the order without the PRs
 * aside) back from index `start`, the group's last PR: a PR joins when it overlaps a PR found already or
 * a group member behind it (`at`: the members' indexes in `seq`). `targets`, when given, holds the
 * target lists of seq's PRs (Line.targets): the walk then looks up no entry (and skips none aside).
 */
function reachBack(
  s: QueueState,
  seq: readonly number[],
  start: number,
  group: readonly number[],
  members: readonly { e: PrEntry; at: number }[],
  skipAside: boolean,
  targets?: readonly (ImpactedTargets | undefined)[],
): number[] {
  const found: number[] = [];
  // reach.some(r => overlaps(candidate, r)) without walking reach: any overlap with a PR that has no
  // target list (or "ALL") is certain, else a shared name with the union of the reached lists.
  let reached = false;
  let reachWild = false;
  const reachNames = new Set<string>();
  const memberTargets = members.map((m) => m.e.impactedTargets?.targets);
  for (let i = start - 1; i >= 0; i -= 1) {
    const n = seq[i] as number;
    if (group.includes(n)) continue;
    const candidate = targets === undefined ? pr(s, n) : undefined;
    if (skipAside && candidate !== undefined && isAside(s, candidate)) continue;
    const t = candidate === undefined ? targets?.[i] : candidate.impactedTargets?.targets;
    const wild = t === undefined || t === 'ALL';
    let joins = reached && (wild || reachWild);
    if (!joins && reached && !wild) for (const x of t) if (reachNames.has(x)) joins = true;
    for (let k = 0; !joins && k < members.length; k += 1) {
      joins = (members[k] as { at: number }).at > i && targetsOverlap(t, memberTargets[k]);
    }
    if (joins) {
      found.push(n);
      reached = true;
      if (wild) reachWild = true;
      else for (const x of t) reachNames.add(x);
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
 * The queue's line as it is now: the PRs of the order that are not aside, in order, at least as far as
 * the last busy PR (resolve.ts: invalidateStale builds it once for all the runs it checks). `from`: where
 * to look for the next group's PRs first (the runs are checked in queue order, so mostly further back).
 */
export interface Line {
  prs: readonly number[];
  from: number;
  /**
   * The target lists of prs' entries (prs[i]'s at i), for parallel mode; absent in single mode. Targets
   * change only in the event's handler, so they hold for the whole reconcile.
   */
  targets?: readonly (ImpactedTargets | undefined)[];
}

/**
 * Why a run no longer tests what would be merged (its predicted base changed), or null if it still does.
 * (Bisection segments are tested off the line and prove nothing: resolve.ts checks them only for a move of
 * the target outside the queue.)
 * `merged`, when given, is mergedSince(s, run.baseSha) (the caller keeps it per base).
 */
export function staleReason(
  s: QueueState,
  run: TestRun,
  line?: Line,
  merged: number[] | null = mergedSince(s, run.baseSha),
): string | null {
  if (merged === null) return `target branch ${s.branch} moved outside the queue; retesting on the new head`;
  const { dependsOn: deps, tested } = run;
  // The tested PRs still queued (mostly all of them: then the run's own list, not a copy), and the first
  // that left the queue or is unknown (read below, once the merges are checked), in one look at each.
  let live: readonly number[] = tested;
  let some: number[] | null = null;
  let gone = -1;
  for (let i = 0; i < tested.length; i += 1) {
    const n = tested[i] as number;
    const state = findPr(s, n)?.state;
    const ended = state === undefined || state === 'failed' || state === 'cancelled';
    if (gone < 0 && ended) gone = i;
    if (!ended && state !== 'not_ready' && state !== 'merged') {
      if (some !== null) some.push(n);
    } else if (some === null) some = tested.slice(0, i);
  }
  if (some !== null) live = some;
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
  if (gone >= 0) {
    const n = tested[gone] as number;
    // (An unknown PR is an internal invariant broken: pr throws, as it always did here.)
    pr(s, n);
    return `PR #${n} tested with it left the queue`;
  }
  const single = s.settings.mode === 'single';
  // The group's indexes on the line, ascending (null when one of its PRs is not on it).
  const at = line === undefined ? null : lineIndexes(line, live);
  // The usual case, without building lists: the PRs ahead are exactly those the run was built on
  // (all still queued, so none merged: the order holds no merged PR).
  if (single && (at !== null ? aheadOnLine(s, line as Line, at, deps) : aheadInSingleMode(s, live, deps)))
    return null;
  // (Every PR of the group on the line: what depsOfGroup would find, without looking again.)
  const expected = at === null ? depsOfGroup(s, live) : depsOnLine(s, line as Line, at, live);
  if (sameList(deps, expected)) return null;
  const left = firstUnmergedNotIn(s, deps, expected);
  if (left !== undefined) return `PR #${left} ahead of it left the queue`;
  const actual = deps.filter((n) => pr(s, n).state !== 'merged');
  // Both lists are free of duplicates and actual is within expected: equal sizes mean equal sets.
  if (actual.length === expected.length) return null;
  const added = firstNotIn(expected, actual);
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

/** The line indexes of a group's PRs, ascending, or null when one of them is not on the line. */
function lineIndexes(line: Line, group: readonly number[]): number[] | null {
  const at: number[] = [];
  for (const n of group) {
    let i = line.prs.indexOf(n, line.from);
    if (i < 0) i = line.prs.indexOf(n);
    if (i < 0) return null;
    // Insertion sort: a group is a few PRs, mostly in order already.
    let k = at.length;
    at.push(i);
    while (k > 0 && (at[k - 1] as number) > i) {
      at[k] = at[k - 1] as number;
      k -= 1;
    }
    at[k] = i;
  }
  line.from = at[0] ?? 0;
  return at;
}

/** depsOfGroup on the line, for a group whose PRs are all on it (at: their line indexes, ascending). */
function depsOnLine(s: QueueState, line: Line, at: readonly number[], group: readonly number[]): number[] {
  const start = at[at.length - 1] as number;
  if (s.settings.mode === 'single') {
    const ahead: number[] = [];
    let skip = 0;
    for (let i = 0; i < start; i += 1) {
      if (i === at[skip]) skip += 1;
      else ahead.push(line.prs[i] as number);
    }
    return ahead;
  }
  const members = group.map((n) => ({ e: pr(s, n), at: line.prs.indexOf(n, at[0]) }));
  return reachBack(s, line.prs, start, group, members, false, line.targets);
}

/**
 * aheadInSingleMode on the line, which holds every PR of the group (at: their line indexes, ascending):
 * whether `deps` without its merged PRs is the line ahead of the group's last PR without the group.
 */
function aheadOnLine(s: QueueState, line: Line, at: readonly number[], deps: readonly number[]): boolean {
  const start = at[at.length - 1] as number;
  const prs = line.prs;
  let k = 0;
  let skip = 0;
  for (let i = 0; i < start; i += 1) {
    if (i === at[skip]) {
      skip += 1;
      continue;
    }
    const n = prs[i] as number;
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

/**
 * The first PR of `a` that is not in `b` (both free of duplicates). Past their common start, an entry
 * of `a` can only be in the rest of `b`; a stale run's lists differ early, so it is found at once.
 */
function firstNotIn(a: readonly number[], b: readonly number[]): number | undefined {
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p += 1;
  for (let i = p; i < a.length; i += 1) if (b.indexOf(a[i] as number, p) < 0) return a[i];
  return undefined;
}

/**
 * firstNotIn(deps without its merged PRs, b), looking up only as many of deps' entries as it walks: a
 * stale run's lists differ early, so most of them are never looked at.
 */
function firstUnmergedNotIn(
  s: QueueState,
  deps: readonly number[],
  b: readonly number[],
): number | undefined {
  let p = 0;
  let common = true;
  for (const n of deps) {
    if (pr(s, n).state === 'merged') continue;
    if (common && p < b.length && b[p] === n) {
      p += 1;
      continue;
    }
    common = false;
    if (b.indexOf(n, p) < 0) return n;
  }
  return undefined;
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
