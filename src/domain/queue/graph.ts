import { findPr, pr } from './context.ts';
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
 * Unmerged PRs ahead of a group that its test branch must contain, in queue order: everything ahead in
 * single mode; in parallel mode the PRs ahead whose targets overlap the group's, transitively.
 */
export function depsOfGroup(s: QueueState, group: readonly number[]): number[] {
  const positions = group.map((n) => s.order.indexOf(n)).filter((i) => i >= 0);
  if (positions.length === 0) return [];
  const members = new Set(group);
  const found: number[] = [];
  const reach: PrEntry[] = group.map((n) => pr(s, n));
  for (let i = Math.max(...positions) - 1; i >= 0; i -= 1) {
    const n = s.order[i];
    if (n === undefined || members.has(n)) continue;
    const candidate = pr(s, n);
    const laterReach = reach.filter((r) => s.order.indexOf(r.number) > i);
    if (laterReach.some((r) => overlaps(s, candidate, r))) {
      found.unshift(n);
      reach.push(candidate);
    }
  }
  return found;
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
 * Bisection runs are judged through the batch run they bisect.
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
  if (run.kind === 'bisection' || live.length === 0) return null;
  const gone = run.tested.find((n) => ['failed', 'cancelled'].includes(pr(s, n).state));
  if (gone !== undefined) return `PR #${gone} tested with it left the queue`;
  const actual = run.dependsOn.filter((n) => pr(s, n).state !== 'merged');
  const expected = depsOfGroup(s, live);
  const left = actual.find((n) => !expected.includes(n));
  if (left !== undefined) return `PR #${left} ahead of it left the queue`;
  const added = expected.find((n) => !actual.includes(n));
  if (added !== undefined) return `PR #${added} was queued ahead of it`;
  return null;
}

/** Queue order of two PRs: priority (0 highest), then submission order. */
export function comparePriority(a: PrEntry, b: PrEntry): number {
  return a.priorityValue - b.priorityValue || a.seq - b.seq;
}

/**
 * Where an admitted PR joins the queue. Urgent PRs go ahead of everything except other urgent PRs and
 * PRs that already passed at the head; others only overtake pending PRs of lower priority.
 */
export function insertPosition(s: QueueState, e: PrEntry): number {
  const entries = s.order.map((n) => pr(s, n));
  if (e.priorityValue === 0) {
    const i = entries.findIndex(
      (o) => o.priorityValue !== 0 && o.state !== 'tests_passed' && s.merging?.prNumber !== o.number,
    );
    return i < 0 ? entries.length : i;
  }
  const settled = entries.findLastIndex((o) => o.state !== 'pending') + 1;
  const i = entries.findIndex((o, k) => k >= settled && comparePriority(e, o) < 0);
  return i < 0 ? entries.length : i;
}
