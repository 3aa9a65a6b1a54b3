// Rules of outgoing webhooks: which events exist, what counts as a webhook URL, when a failed
// delivery is tried again, and which merge-queue PRs finished in one engine step. Pure.
import type { PrEntry, QueueState } from './queue/index.ts';

/** Every event type an endpoint can subscribe to, in the order the API lists them. */
export const WEBHOOK_EVENT_TYPES = [
  'test.status_changed',
  'test.quarantined',
  'pull_request.merged',
  'pull_request.failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** One event to deliver: its type and its `data` (plain JSON). */
export interface WebhookEvent {
  readonly type: WebhookEventType;
  readonly data: Record<string, unknown>;
}

/** Waits before the 2nd, 3rd, … attempt; after the last one fails the delivery is given up. */
export const RETRY_DELAYS_MS: readonly number[] = [
  10_000, // 10 s
  60_000, // 1 min
  5 * 60_000, // 5 min
  30 * 60_000, // 30 min
  2 * 3_600_000, // 2 h
  6 * 3_600_000, // 6 h
  12 * 3_600_000, // 12 h
];
/** Attempts made before a delivery is given up (about 21 hours after the first). */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** When to try again after `attempts` failed attempts; null when it is time to give up. */
export function retryDelay(attempts: number): number | null {
  if (attempts >= MAX_DELIVERY_ATTEMPTS) return null;
  return RETRY_DELAYS_MS[Math.max(0, attempts - 1)] ?? null;
}

/** The URL if `raw` is an absolute http:// or https:// URL with a host, else null. */
export function webhookUrl(raw: string): URL | null {
  if (!URL.canParse(raw)) return null;
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return url.hostname === '' ? null : url;
}

/** The event types an endpoint's stored list holds, ignoring any this version does not know. */
export function parseEventTypes(json: string): WebhookEventType[] {
  const parsed = JSON.parse(json) as unknown;
  if (!Array.isArray(parsed)) return [];
  return WEBHOOK_EVENT_TYPES.filter((t) => parsed.includes(t));
}

export type FinishedState = 'merged' | 'failed';

/**
 * The PRs an engine step moved to merged or failed. A transition sets `stateChangedAt` to the step's
 * time, so the previous state is only consulted for PRs that might have changed.
 */
export function finishedPrs(
  after: QueueState,
  now: number,
  before: () => QueueState,
): (PrEntry & { state: FinishedState })[] {
  // One pass over every entry (the state keeps no index of what a step changed): the time first, a
  // number compare that rules out nearly all of them.
  const candidates: (PrEntry & { state: FinishedState })[] = [];
  for (const e of after.prs.values()) {
    if (e.stateChangedAt === now && (e.state === 'merged' || e.state === 'failed'))
      candidates.push(e as PrEntry & { state: FinishedState });
  }
  if (candidates.length === 0) return [];
  const previous = before().prs;
  return candidates.filter((e) => {
    const was = previous.get(e.number);
    return was === undefined || was.id !== e.id || was.state !== e.state;
  });
}

/** The target commit a PR's merge produced, when the queue's lineage still holds it. */
export function mergedSha(state: QueueState, prNumber: number): string | null {
  for (let i = state.lineage.length - 1; i >= 0; i--) {
    const entry = state.lineage[i];
    if (entry?.prNumber === prNumber) return entry.sha;
  }
  return null;
}
