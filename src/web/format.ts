import { type Html, html } from './html.ts';

const pad = (n: number) => String(n).padStart(2, '0');

/** "2026-11-01 12:05 UTC" */
export function utc(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** "2026-11-01 12:05:09 UTC" */
export function utcSeconds(ms: number): string {
  const d = new Date(ms);
  return `${utc(ms).slice(0, -4)}:${pad(d.getUTCSeconds())} UTC`;
}

/**
 * Whether times shown together need their seconds: two of them (different instants) fall in the
 * same minute, so minutes alone would read as equal ("08:01 UTC" five times).
 */
export function needSeconds(times: readonly (number | string | null | undefined)[]): boolean {
  const byMinute = new Map<number, number>();
  for (const t of times) {
    const at = typeof t === 'string' ? Date.parse(t) : t;
    if (at === null || at === undefined || !Number.isFinite(at)) continue;
    const minute = Math.floor(at / 60_000);
    const seen = byMinute.get(minute);
    if (seen !== undefined && seen !== at) return true;
    byMinute.set(minute, at);
  }
  return false;
}

/** "Nov 1" */
export function shortDay(ms: number): string {
  const d = new Date(ms);
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  return `${months[d.getUTCMonth()]} ${d.getUTCDate()}`;
}

/** A <time> element with the machine-readable instant; to the second when `seconds` (see needSeconds). */
export function time(ms: number | string | null | undefined, seconds = false): Html {
  if (ms === null || ms === undefined || ms === '') return html`—`;
  const at = typeof ms === 'string' ? Date.parse(ms) : ms;
  if (!Number.isFinite(at)) return html`—`;
  return html`<time datetime="${new Date(at).toISOString()}">${seconds ? utcSeconds(at) : utc(at)}</time>`;
}

/** "3 d 4 h", "2 h 5 min", "45 s" */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** "12.5%" of failed among ran; "no runs" when none ran. */
export function rate(counts: { ran: number; failed: number }): string {
  if (counts.ran === 0) return 'no runs';
  return `${((100 * counts.failed) / counts.ran).toFixed(1)}% (${counts.failed} of ${counts.ran} runs)`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

export function shortSha(sha: string | null | undefined): string {
  return sha === null || sha === undefined || sha === '' ? '—' : sha.slice(0, 10);
}

/** A status (HEALTHY / FLAKY / BROKEN, or a queue or run state) as a badge; the text itself carries the meaning. */
export function badge(value: string): Html {
  const key = value.toLowerCase().replace(/[^a-z_]/g, '');
  return html`<span class="badge badge-${key}">${value.replaceAll('_', ' ')}</span>`;
}

/** A test's duration: "420 ms", "3.4 s", then as `duration` ("2 min"). */
export function testDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return duration(ms);
}
