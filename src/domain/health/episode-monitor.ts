// Turns an episode replay into a monitor outcome, given the monitor's previous state.
import type { EpisodeResult, EpisodeRules } from './episodes.ts';
import { replayEpisodes } from './episodes.ts';
import type { MonitorOutcome } from './outcome.ts';
import { activate, activationTime, resolve, unchanged } from './outcome.ts';
import type { MonitorRef, MonitorState } from './snapshot.ts';

export interface EpisodeWording<T> {
  /** The activation reason; `trigger` is null only when the episode began before the loaded events. */
  activated(trigger: T | null): string;
  resolved: string;
}

/** Evaluates an episode-based monitor (pass-on-retry, failure count) over its sorted events. */
export function evaluateEpisodes<T extends { at: number }>(
  monitor: MonitorRef,
  prev: MonitorState | undefined,
  input: { events: readonly T[]; rules: EpisodeRules; now: number; wording: EpisodeWording<T> },
): MonitorOutcome {
  const { events, rules, now, wording } = input;
  const seed = prev?.kind === 'active' ? prev : null;
  const result: EpisodeResult<T> = replayEpisodes(events, rules, now, seed);
  if (result.kind === 'ongoing') {
    if (prev?.kind === 'active') {
      return unchanged(monitor, { ...prev, lastEventAt: Math.max(prev.lastEventAt, result.lastEventAt) });
    }
    const since = activationTime(result.since, prev, now);
    return activate(monitor, { since, lastEventAt: result.lastEventAt }, wording.activated(result.trigger));
  }
  if (prev?.kind !== 'active') return unchanged(monitor, prev);
  const at = result.kind === 'ended' ? result.endedAt : now;
  return resolve(monitor, prev, at, now, wording.resolved);
}
