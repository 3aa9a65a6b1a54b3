// most_common_failures: failures grouped by fingerprint, most frequent first.
import { type FailureAnatomy, failureAnatomy } from './anatomy.ts';
import { fingerprintOf } from './fingerprint.ts';

export const MAX_SUMMARY = 200;
export const NO_MESSAGE = '(no failure message)';

/** One failing run: its failure text and when it ran (epoch ms). */
export interface FailureOccurrence {
  text: string;
  at: number;
}

export interface FailureGroup {
  /** The most common one-line summary among the group's occurrences. */
  summary: string;
  occurrenceCount: number;
  lastOccurrence: number;
  fingerprint: string;
}

/** A short one-line summary: the headline (or first frame), whitespace collapsed, at most 200 characters. */
export function summariseFailure(text: string): string {
  return summaryOf(failureAnatomy(text));
}

function summaryOf({ headline, frames }: FailureAnatomy): string {
  const line = (headline || frames[0] || '').replace(/\s+/g, ' ').trim();
  if (line === '') return NO_MESSAGE;
  return line.length <= MAX_SUMMARY ? line : `${line.slice(0, MAX_SUMMARY - 1)}…`;
}

/** Fingerprint and summary of one failure text, dissecting it once. */
export function describeFailure(text: string): { fingerprint: string; summary: string } {
  const anatomy = failureAnatomy(text);
  return { fingerprint: fingerprintOf(anatomy), summary: summaryOf(anatomy) };
}

interface Bucket {
  fingerprint: string;
  count: number;
  last: number;
  /** Per summary: how often it occurred and when last. */
  summaries: Map<string, { count: number; last: number }>;
}

/** The `limit` largest groups, by count, then most recent, then fingerprint. */
export function groupFailures(items: readonly FailureOccurrence[], limit: number): FailureGroup[] {
  const buckets = new Map<string, Bucket>();
  for (const { text, at } of items) {
    const { fingerprint, summary } = describeFailure(text);
    const bucket = buckets.get(fingerprint) ?? { fingerprint, count: 0, last: at, summaries: new Map() };
    bucket.count++;
    bucket.last = Math.max(bucket.last, at);
    const seen = bucket.summaries.get(summary) ?? { count: 0, last: at };
    bucket.summaries.set(summary, { count: seen.count + 1, last: Math.max(seen.last, at) });
    buckets.set(fingerprint, bucket);
  }
  return [...buckets.values()]
    .map((bucket) => ({
      summary: representative(bucket.summaries),
      occurrenceCount: bucket.count,
      lastOccurrence: bucket.last,
      fingerprint: bucket.fingerprint,
    }))
    .sort(
      (a, b) =>
        b.occurrenceCount - a.occurrenceCount ||
        b.lastOccurrence - a.lastOccurrence ||
        compareText(a.fingerprint, b.fingerprint),
    )
    .slice(0, Math.max(0, limit));
}

/** The most frequent summary; ties go to the most recent, then to the alphabetically first. */
function representative(summaries: Map<string, { count: number; last: number }>): string {
  const ranked = [...summaries.entries()].sort(
    ([textA, a], [textB, b]) => b.count - a.count || b.last - a.last || compareText(textA, textB),
  );
  return ranked[0]?.[0] ?? NO_MESSAGE;
}

function compareText(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}
