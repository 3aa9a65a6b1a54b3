// Counts attempts per test identity within one file, to number retries 0, 1, 2, …
import type { JunitAttempt } from './types.ts';

/**
 * Keys are a 53-bit hash of the identity fields rather than the fields themselves, so memory per
 * distinct test stays small (a file may hold 100k+ tests with 1,000-character names). A collision
 * (odds ~1e-6 for 100k tests) would only misnumber retryIndex, never merge records.
 *
 * The hash is that of the fields joined with U+0000 (missing ones as ''), computed without building
 * the joined string. Consecutive testcases usually share file, classname and parent, so the hash
 * state after those three is reused while they stay the same. The counts live in typed arrays (an
 * open-addressing table), so a file's 100k identities add no objects for the garbage collector.
 */
/** The identity part of an attempt. */
type TestIdentityFields = Pick<JunitAttempt, 'file' | 'classname' | 'parent' | 'name' | 'customId'>;

export interface RetryCounter {
  /** The retryIndex of the next attempt of this identity (0 for the first), and counts it. */
  next(attempt: TestIdentityFields): number;
}

const SEPARATOR = 0;
const INITIAL_CAPACITY = 1024;

export function createRetryCounter(): RetryCounter {
  return new HashedRetryCounter();
}

class HashedRetryCounter implements RetryCounter {
  private keys = new Float64Array(INITIAL_CAPACITY);
  /** Attempts seen per slot; 0 marks an empty slot. */
  private counts = new Uint32Array(INITIAL_CAPACITY);
  private size = 0;
  // Lane state after "file \0 classname \0 parent \0", for the last prefix seen.
  private prefixFile: string | null = null;
  private prefixClassname: string | null = null;
  private prefixParent: string | null = null;
  private prefixReady = false;
  private prefixA = 0;
  private prefixB = 0;
  // Lane state while hashing (avoids returning pairs).
  private a = 0;
  private b = 0;

  next(attempt: TestIdentityFields): number {
    this.startFrom(attempt.file, attempt.classname, attempt.parent);
    this.feed(attempt.name);
    this.feedCode(SEPARATOR);
    if (attempt.customId !== null) this.feed(attempt.customId);
    return this.count(this.finish());
  }

  private startFrom(file: string | null, classname: string | null, parent: string | null): void {
    if (
      !this.prefixReady ||
      file !== this.prefixFile ||
      classname !== this.prefixClassname ||
      parent !== this.prefixParent
    ) {
      this.a = 0x811c9dc5;
      this.b = 0x2545f491;
      if (file !== null) this.feed(file);
      this.feedCode(SEPARATOR);
      if (classname !== null) this.feed(classname);
      this.feedCode(SEPARATOR);
      if (parent !== null) this.feed(parent);
      this.feedCode(SEPARATOR);
      this.prefixFile = file;
      this.prefixClassname = classname;
      this.prefixParent = parent;
      this.prefixA = this.a;
      this.prefixB = this.b;
      this.prefixReady = true;
      return;
    }
    this.a = this.prefixA;
    this.b = this.prefixB;
  }

  /** Two independent 32-bit multiplicative lanes. */
  private feed(text: string): void {
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x5bd1e995);
      b ^= b >>> 15;
    }
    this.a = a;
    this.b = b;
  }

  private feedCode(code: number): void {
    this.a = Math.imul(this.a ^ code, 0x01000193);
    const b = Math.imul(this.b ^ code, 0x5bd1e995);
    this.b = b ^ (b >>> 15);
  }

  /** Folds the lanes into 53 bits. */
  private finish(): number {
    const a = Math.imul(this.a ^ (this.a >>> 16), 0x85ebca6b);
    const b = Math.imul(this.b ^ (this.b >>> 13), 0xc2b2ae35);
    return (b >>> 11) * 0x100000000 + (a >>> 0);
  }

  /** Returns how often `key` was counted before, and counts it once more. */
  private count(key: number): number {
    const mask = this.keys.length - 1;
    let slot = (key % 0x100000000) & mask;
    for (;;) {
      const seen = this.counts[slot] ?? 0;
      if (seen === 0) break;
      if (this.keys[slot] === key) {
        this.counts[slot] = seen + 1;
        return seen;
      }
      slot = (slot + 1) & mask;
    }
    this.keys[slot] = key;
    this.counts[slot] = 1;
    if (++this.size * 2 > this.keys.length) this.grow();
    return 0;
  }

  private grow(): void {
    const keys = this.keys;
    const counts = this.counts;
    this.keys = new Float64Array(keys.length * 2);
    this.counts = new Uint32Array(keys.length * 2);
    const mask = this.keys.length - 1;
    for (let i = 0; i < keys.length; i++) {
      const seen = counts[i] ?? 0;
      if (seen === 0) continue;
      const key = keys[i] ?? 0;
      let slot = (key % 0x100000000) & mask;
      while (this.counts[slot] !== 0) slot = (slot + 1) & mask;
      this.keys[slot] = key;
      this.counts[slot] = seen;
    }
  }
}
