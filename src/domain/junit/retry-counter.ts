// Counts attempts per test identity within one file, to number retries 0, 1, 2, …
import type { JunitAttempt } from './types.ts';

/**
 * Keys are a 53-bit hash of the identity fields rather than the fields themselves, so memory per
 * distinct test stays small (a file may hold 100k+ tests with 1,000-character names). A collision
 * (odds ~1e-6 for 100k tests) would only misnumber retryIndex, never merge records.
 */
/** The identity part of an attempt. */
type TestIdentityFields = Pick<JunitAttempt, 'file' | 'classname' | 'parent' | 'name' | 'customId'>;

export function createRetryCounter(): (attempt: TestIdentityFields) => number {
  const seen = new Map<number, number>();
  return (attempt) => {
    const key = hash53(identityKey(attempt));
    const index = seen.get(key) ?? 0;
    seen.set(key, index + 1);
    return index;
  };
}

/** The fields that make up Trunk's test identity (flaky.md §a.5), missing ones as ''. */
function identityKey(attempt: TestIdentityFields): string {
  const fields = [attempt.file, attempt.classname, attempt.parent, attempt.name, attempt.customId];
  return fields.map((field) => field ?? '').join('\u0000');
}

/** Two independent 32-bit multiplicative lanes folded into 53 bits. */
function hash53(text: string): number {
  let a = 0x811c9dc5;
  let b = 0x2545f491;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  return (b >>> 11) * 0x100000000 + (a >>> 0);
}
