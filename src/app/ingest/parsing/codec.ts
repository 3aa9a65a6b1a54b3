// Parsed attempts as a compact message from a parser thread to the request thread. A structured
// clone of attempt objects is large and slow to receive (every repeated classname, file and suite
// name is copied again: docs/benchmarks.md); here each repeated string travels once and the
// other fields in typed arrays. The strings are copied (once) into a byte buffer that is moved to
// the request thread, not cloned: one byte per character for the (usual) strings without a
// character above U+00FF, whatever the representation of the text they were cut from; the rest
// travel in one string. The request thread makes one string of each and cuts the attempts' strings
// out of them, by offsets (no separator to scan for or escape).
import type { AttemptOutcome, AttemptSource, JunitAttempt } from '../../../domain/junit/index.ts';

/** Attempts in the compact form. */
export interface EncodedAttempts {
  readonly count: number;
  /** The Latin-1 strings (no character above U+00FF), one byte per character, back to back. */
  readonly narrow: Uint8Array;
  /** The other strings, back to back. */
  readonly wide: string;
  /** Per distinct string: start and end offsets, in `wide` when the start is negative (as ~start). */
  readonly spans: Int32Array;
  /** INTS fields per attempt: string numbers (-1: null), codes, counters. */
  readonly ints: Int32Array;
  /** Duration, timestamp and line per attempt (NaN: null). */
  readonly nums: Float64Array;
}

const INTS = 12;
const NUMS = 3;
// ints: name, classname, file, parent, suite, customId, failureMessage, failureType, failureText,
// code (outcome | failureKind << 2 | source << 4), retryIndex, caseIndex.
const CODE = 9;
const OUTCOMES: readonly AttemptOutcome[] = ['passed', 'failed', 'skipped'];
const SOURCES: readonly AttemptSource[] = ['testcase', 'flaky', 'rerun'];
const KINDS: readonly JunitAttempt['failureKind'][] = [null, 'failure', 'error'];

// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole Latin-1 range is the point.
const NOT_LATIN1 = /[^\u0000-\u00ff]/;

function outcomeCode(outcome: AttemptOutcome): number {
  return outcome === 'passed' ? 0 : outcome === 'failed' ? 1 : 2;
}

function sourceCode(source: AttemptSource): number {
  return source === 'testcase' ? 0 : source === 'flaky' ? 1 : 2;
}

function kindCode(kind: JunitAttempt['failureKind']): number {
  return kind === null ? 0 : kind === 'failure' ? 1 : 2;
}

/**
 * Encodes attempts one at a time as they are parsed (`add`), and hands out what it holds as one
 * message (`take`). It holds no attempt: the Latin-1 strings are copied as they are added, the
 * others (rare) are kept until `take` joins them.
 */
export class AttemptEncoder {
  #count = 0;
  // Allocated on the first `add` after a `take` (a file's last batch leaves none behind), at the
  // size of the batch before: a file's batches are mostly alike.
  #ints = new Int32Array(0);
  #nums = new Float64Array(0);
  #spans = new Int32Array(0);
  /** Distinct strings so far (spans / 2). */
  #strings = 0;
  #narrow = Buffer.allocUnsafeSlow(0);
  #narrowLength = 0;
  #wide: string[] = [];
  #wideLength = 0;
  /** Repeated values (classnames, files, suites, messages) travel once. */
  #index = new Map<string, number>();
  // Consecutive attempts usually share classname, file, parent and suite: one comparison, no lookup.
  #lastClassname: string | null = null;
  #lastClassnameAt = -1;
  #lastFile: string | null = null;
  #lastFileAt = -1;
  #lastParent: string | null = null;
  #lastParentAt = -1;
  #lastSuite: string | null = null;
  #lastSuiteAt = -1;

  constructor(
    /** Attempts room is made for at first (it grows as needed). */
    private attemptsHint = 64,
    /** Bytes of Latin-1 text room is made for at first. */
    private narrowHint = 4096,
  ) {}

  /** Attempts added since the last `take`. */
  get count(): number {
    return this.#count;
  }

  add(a: Readonly<JunitAttempt>): void {
    const k = this.#count;
    if ((k + 1) * INTS > this.#ints.length) this.#growAttempts();
    const ints = this.#ints;
    const o = k * INTS;
    ints[o] = this.#own(a.name);
    const classname = a.classname;
    if (classname !== this.#lastClassname || this.#lastClassnameAt === -1) {
      this.#lastClassname = classname;
      this.#lastClassnameAt = this.#shared(classname);
    }
    ints[o + 1] = this.#lastClassnameAt;
    const file = a.file;
    if (file !== this.#lastFile || this.#lastFileAt === -1) {
      this.#lastFile = file;
      this.#lastFileAt = this.#shared(file);
    }
    ints[o + 2] = this.#lastFileAt;
    const parent = a.parent;
    if (parent !== this.#lastParent || this.#lastParentAt === -1) {
      this.#lastParent = parent;
      this.#lastParentAt = this.#shared(parent);
    }
    ints[o + 3] = this.#lastParentAt;
    const suite = a.suite;
    if (suite !== this.#lastSuite || this.#lastSuiteAt === -1) {
      this.#lastSuite = suite;
      this.#lastSuiteAt = this.#shared(suite);
    }
    ints[o + 4] = this.#lastSuiteAt;
    ints[o + 5] = a.customId === null ? -1 : this.#own(a.customId);
    ints[o + 6] = this.#shared(a.failureMessage);
    ints[o + 7] = this.#shared(a.failureType);
    ints[o + 8] = a.failureText === null ? -1 : this.#own(a.failureText);
    ints[o + CODE] = outcomeCode(a.outcome) | (kindCode(a.failureKind) << 2) | (sourceCode(a.source) << 4);
    ints[o + 10] = a.retryIndex;
    ints[o + 11] = a.caseIndex;
    const nums = this.#nums;
    const m = k * NUMS;
    nums[m] = a.durationMs ?? Number.NaN;
    nums[m + 1] = a.timestamp ?? Number.NaN;
    nums[m + 2] = a.line ?? Number.NaN;
    this.#count = k + 1;
  }

  /** What was added since the last `take`, as one message; the encoder starts afresh. */
  take(): EncodedAttempts {
    const n = this.#count;
    const narrow = new Uint8Array(this.#narrow.buffer, this.#narrow.byteOffset, this.#narrowLength);
    const encoded: EncodedAttempts = {
      count: n,
      narrow,
      wide: this.#wideLength === 0 ? '' : this.#wide.join(''),
      spans: this.#spans.subarray(0, this.#strings * 2),
      ints: this.#ints.subarray(0, n * INTS),
      nums: this.#nums.subarray(0, n * NUMS),
    };
    // The next message gets buffers of its own (these are moved to the other thread).
    this.attemptsHint = Math.max(n, 64);
    this.narrowHint = Math.max(this.#narrowLength + (this.#narrowLength >>> 3), 4096);
    this.#ints = new Int32Array(0);
    this.#nums = new Float64Array(0);
    this.#spans = new Int32Array(0);
    this.#narrow = Buffer.allocUnsafeSlow(0);
    this.#count = 0;
    this.#strings = 0;
    this.#narrowLength = 0;
    this.#wide = [];
    this.#wideLength = 0;
    this.#index = new Map();
    this.#lastClassname = null;
    this.#lastClassnameAt = -1;
    this.#lastFile = null;
    this.#lastFileAt = -1;
    this.#lastParent = null;
    this.#lastParentAt = -1;
    this.#lastSuite = null;
    this.#lastSuiteAt = -1;
    return encoded;
  }

  #shared(s: string | null): number {
    if (s === null) return -1;
    let i = this.#index.get(s);
    if (i === undefined) {
      i = this.#own(s);
      this.#index.set(s, i);
    }
    return i;
  }

  /** Copies `s` in and returns its number. Names and failure texts are mostly distinct: no map entry. */
  #own(s: string): number {
    const i = this.#strings;
    if ((i + 1) * 2 > this.#spans.length) {
      const spans = new Int32Array(Math.max(this.#spans.length * 2, this.attemptsHint * 4));
      spans.set(this.#spans);
      this.#spans = spans;
    }
    const length = s.length;
    const start = this.#narrowLength;
    if (start + length > this.#narrow.length) this.#growNarrow(start + length);
    const narrow = this.#narrow;
    const wide = NOT_LATIN1.test(s);
    if (!wide) narrow.write(s, start, length, 'latin1');
    const spans = this.#spans;
    if (wide) {
      spans[2 * i] = ~this.#wideLength;
      this.#wideLength += length;
      spans[2 * i + 1] = this.#wideLength;
      this.#wide.push(s);
    } else {
      spans[2 * i] = start;
      this.#narrowLength = start + length;
      spans[2 * i + 1] = start + length;
    }
    this.#strings = i + 1;
    return i;
  }

  #growAttempts(): void {
    const capacity = Math.max(this.attemptsHint, (this.#nums.length / NUMS) * 2);
    const ints = new Int32Array(capacity * INTS);
    ints.set(this.#ints);
    this.#ints = ints;
    const nums = new Float64Array(capacity * NUMS);
    nums.set(this.#nums);
    this.#nums = nums;
  }

  #growNarrow(needed: number): void {
    const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.#narrow.length * 2, this.narrowHint));
    grown.set(this.#narrow.subarray(0, this.#narrowLength));
    this.#narrow = grown;
  }
}

/** The buffers to move (not copy) to the receiving thread with `encoded`. */
export function transferList(encoded: EncodedAttempts): ArrayBuffer[] {
  return [
    encoded.narrow.buffer as ArrayBuffer,
    encoded.spans.buffer as ArrayBuffer,
    encoded.ints.buffer as ArrayBuffer,
    encoded.nums.buffer as ArrayBuffer,
  ];
}

export function encodeAttempts(attempts: readonly JunitAttempt[]): EncodedAttempts {
  const encoder = new AttemptEncoder(Math.max(1, attempts.length));
  for (const attempt of attempts) encoder.add(attempt);
  return encoder.take();
}

export function decodeAttempts(encoded: EncodedAttempts): JunitAttempt[] {
  const { count, narrow, wide, spans, ints, nums } = encoded;
  const text =
    narrow.length === 0
      ? ''
      : Buffer.from(narrow.buffer, narrow.byteOffset, narrow.length).toString('latin1');
  const strings: string[] = new Array(spans.length >>> 1);
  for (let i = 0; i < strings.length; i++) {
    const start = spans[2 * i] as number;
    const end = spans[2 * i + 1] as number;
    strings[i] = start >= 0 ? text.slice(start, end) : wide.slice(~start, end);
  }
  const str = (i: number): string | null => (i < 0 ? null : (strings[i] as string));
  const num = (x: number): number | null => (Number.isNaN(x) ? null : x);
  const attempts: JunitAttempt[] = new Array(count);
  for (let k = 0; k < count; k++) {
    const o = k * INTS;
    const m = k * NUMS;
    const code = ints[o + CODE] as number;
    attempts[k] = {
      name: strings[ints[o] as number] as string,
      classname: str(ints[o + 1] as number),
      file: str(ints[o + 2] as number),
      parent: str(ints[o + 3] as number),
      suite: str(ints[o + 4] as number),
      customId: str(ints[o + 5] as number),
      line: num(nums[m + 2] as number),
      outcome: OUTCOMES[code & 3] as AttemptOutcome,
      failureKind: KINDS[(code >>> 2) & 3] as JunitAttempt['failureKind'],
      failureMessage: str(ints[o + 6] as number),
      failureType: str(ints[o + 7] as number),
      failureText: str(ints[o + 8] as number),
      durationMs: num(nums[m] as number),
      timestamp: num(nums[m + 1] as number),
      retryIndex: ints[o + 10] as number,
      source: SOURCES[(code >>> 4) & 3] as AttemptSource,
      caseIndex: ints[o + 11] as number,
    };
  }
  return attempts;
}
