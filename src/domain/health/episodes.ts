// Replays time-stamped events into "episodes": a monitor activates when `count` events fall within
// `windowMs`, and resolves once `timeoutMs` pass without a new event (each event resets the clock).
// Pass-on-retry is count 1 with the recovery period as timeout; failure count uses all three.

export interface EpisodeRules {
  count: number;
  windowMs: number;
  timeoutMs: number;
}

/** An episode already known to be running (from the stored monitor state). */
export interface EpisodeSeed {
  since: number;
  lastEventAt: number;
}

export type EpisodeResult<T> =
  /** An episode is running; `trigger` is the event that started it, null when it began before the events. */
  | { kind: 'ongoing'; since: number; lastEventAt: number; trigger: T | null }
  /** The latest episode ended at `endedAt`: its last event plus the timeout. */
  | { kind: 'ended'; lastEventAt: number; endedAt: number }
  /** The events never reached the count. */
  | { kind: 'none' };

interface Open<T> {
  since: number;
  last: number;
  trigger: T | null;
}

/** Replays `events` (sorted by `at`, ascending) as of `now`, continuing `seed` if there is one. */
export function replayEpisodes<T extends { at: number }>(
  events: readonly T[],
  rules: EpisodeRules,
  now: number,
  seed: EpisodeSeed | null,
): EpisodeResult<T> {
  let open: Open<T> | null =
    seed === null ? null : { since: seed.since, last: seed.lastEventAt, trigger: null };
  let ended: EpisodeResult<T> = { kind: 'none' };
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (open !== null && event.at - open.last >= rules.timeoutMs) {
      ended = { kind: 'ended', lastEventAt: open.last, endedAt: open.last + rules.timeoutMs };
      open = null;
    }
    if (open !== null) {
      open.last = Math.max(open.last, event.at);
    } else if (countWithin(events, i, rules.windowMs) >= rules.count) {
      open = { since: event.at, last: event.at, trigger: event };
    }
  }
  if (open !== null && now - open.last >= rules.timeoutMs) {
    return { kind: 'ended', lastEventAt: open.last, endedAt: open.last + rules.timeoutMs };
  }
  if (open !== null)
    return { kind: 'ongoing', since: open.since, lastEventAt: open.last, trigger: open.trigger };
  return ended;
}

/** How many events lie in the window (events[index].at − windowMs, events[index].at]. */
function countWithin(events: readonly { at: number }[], index: number, windowMs: number): number {
  const end = events[index]!.at;
  let count = 0;
  for (let i = index; i >= 0 && events[i]!.at > end - windowMs; i--) count++;
  return count;
}
