/** Pure: daily health figures derived from today's counts and the transitions since. */

export interface DayFigures {
  flaky: number;
  broken: number;
  quarantined: number;
}

/** A status or quarantine change as test_case_events stores it. */
export interface Transition {
  readonly kind: string;
  readonly at: number;
  readonly data: string;
}

type Delta = { -readonly [K in keyof DayFigures]: number };

/** How a transition changed the counts (status: from → to; quarantine: in or out). */
function delta(t: Transition): Delta {
  const d: Delta = { flaky: 0, broken: 0, quarantined: 0 };
  let data: { from?: unknown; to?: unknown; quarantined?: unknown };
  try {
    data = JSON.parse(t.data) as typeof data;
  } catch {
    return d;
  }
  if (t.kind === 'status') {
    const key = (s: unknown) => (s === 'FLAKY' ? 'flaky' : s === 'BROKEN' ? 'broken' : undefined);
    const from = key(data.from);
    const to = key(data.to);
    if (from !== undefined) d[from] -= 1;
    if (to !== undefined) d[to] += 1;
  } else if (t.kind === 'quarantine' && typeof data.quarantined === 'boolean') {
    d.quarantined = data.quarantined ? 1 : -1;
  }
  return d;
}

/**
 * The figures at each of the given instants (day ends): the counts now, minus every change that
 * happened at or after that instant. `transitions` must hold every change since the earliest instant.
 */
export function figuresAt(
  current: DayFigures,
  transitions: readonly Transition[],
  instants: readonly number[],
) {
  const deltas = transitions.map((t) => ({ at: t.at, d: delta(t) }));
  return instants.map((instant) => {
    const f: Delta = { ...current };
    for (const { at, d } of deltas) {
      if (at < instant) continue;
      f.flaky -= d.flaky;
      f.broken -= d.broken;
      f.quarantined -= d.quarantined;
    }
    return {
      flaky: Math.max(0, f.flaky),
      broken: Math.max(0, f.broken),
      quarantined: Math.max(0, f.quarantined),
    };
  });
}
