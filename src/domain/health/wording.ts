// Small formatters for the sentences in status and monitor reasons.
import { DAY_MS, HOUR_MS } from './policy.ts';

const MINUTE_MS = 60_000;

/** `0.3416` → `34.2%`, `0.3` → `30%`. */
export function percent(fraction: number): string {
  const value = Math.round(fraction * 1000) / 10;
  return `${value}%`;
}

/** A span as people say it: `30 min`, `6 h`, `1 day`, `7 days`. */
export function duration(ms: number): string {
  if (ms >= DAY_MS && ms % DAY_MS === 0) return plural(ms / DAY_MS, 'day');
  if (ms >= HOUR_MS && ms % HOUR_MS === 0) return `${ms / HOUR_MS} h`;
  if (ms >= HOUR_MS) return `${Math.round((ms / HOUR_MS) * 10) / 10} h`;
  return `${Math.max(1, Math.round(ms / MINUTE_MS))} min`;
}

/** `1 failure`, `3 failures`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The first seven characters of a commit sha, as git shows it. */
export function shortSha(sha: string): string {
  return sha.slice(0, 7);
}

/** `on main`, `on main, release/*`, or `on all branches` for the catch-all scope. */
export function branchScope(patterns: readonly string[]): string {
  if (patterns.some((pattern) => /^\*+$/.test(pattern))) return 'on all branches';
  return `on ${patterns.join(', ')}`;
}

/** `on main`, or `on feature/x (PR #12)`. */
export function branchOfRun(branch: string, prNumber: number | null): string {
  return prNumber === null ? `on ${branch}` : `on ${branch} (PR #${prNumber})`;
}
