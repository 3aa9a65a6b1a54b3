// Parsed attempts as a compact message from a parser thread to the request thread. A structured
// clone of 100k attempt objects is ~75 MB and costs the receiving thread ~0.7 s (every repeated
// classname, file and suite name is copied again); here each repeated string travels once, in one
// text joined by U+0000 (a character no XML document can hold), and the other fields in typed arrays.
import type { AttemptOutcome, AttemptSource, JunitAttempt } from '../../domain/junit/index.ts';

/** Attempts in the compact form. */
export interface EncodedAttempts {
  readonly count: number;
  /** The strings (repeated ones once), joined by U+0000. */
  readonly strings: string;
  /** INTS fields per attempt: string indexes (-1: null), codes, counters. */
  readonly ints: Int32Array;
  /** Duration, timestamp and line per attempt (NaN: null). */
  readonly nums: Float64Array;
}

const SEPARATOR = '\u0000';
const INTS = 14;
const NUMS = 3;
const OUTCOMES: readonly AttemptOutcome[] = ['passed', 'failed', 'skipped'];
const SOURCES: readonly AttemptSource[] = ['testcase', 'flaky', 'rerun'];
const KINDS: readonly (JunitAttempt['failureKind'] & string)[] = ['failure', 'error'];

export function encodeAttempts(attempts: readonly JunitAttempt[]): EncodedAttempts {
  const index = new Map<string, number>();
  const strings: string[] = [];
  const add = (s: string): number => {
    strings.push(s.includes(SEPARATOR) ? s.replaceAll(SEPARATOR, '\uFFFD') : s);
    return strings.length - 1;
  };
  /** Repeated values (classnames, files, suites, messages) travel once. */
  const shared = (s: string | null): number => {
    if (s === null) return -1;
    let i = index.get(s);
    if (i === undefined) {
      i = add(s);
      index.set(s, i);
    }
    return i;
  };
  /** Names and failure texts are mostly distinct: not worth a map entry each. */
  const own = (s: string | null): number => (s === null ? -1 : add(s));
  // Consecutive attempts usually share classname, file, parent and suite: one comparison, no lookup.
  const last: (string | null)[] = [null, null, null, null];
  const lastIndex = [-1, -1, -1, -1];
  const field = (slot: number, s: string | null): number => {
    if (s === last[slot] && lastIndex[slot] !== -1) return lastIndex[slot] as number;
    const i = shared(s);
    last[slot] = s;
    lastIndex[slot] = i;
    return i;
  };
  const n = attempts.length;
  const ints = new Int32Array(n * INTS);
  const nums = new Float64Array(n * NUMS);
  for (let k = 0; k < n; k++) {
    const a = attempts[k] as JunitAttempt;
    const o = k * INTS;
    ints[o] = own(a.name);
    ints[o + 1] = field(0, a.classname);
    ints[o + 2] = field(1, a.file);
    ints[o + 3] = field(2, a.parent);
    ints[o + 4] = field(3, a.suite);
    ints[o + 5] = own(a.customId);
    ints[o + 6] = OUTCOMES.indexOf(a.outcome);
    ints[o + 7] = a.failureKind === null ? -1 : KINDS.indexOf(a.failureKind);
    ints[o + 8] = shared(a.failureMessage);
    ints[o + 9] = shared(a.failureType);
    ints[o + 10] = own(a.failureText);
    ints[o + 11] = a.retryIndex;
    ints[o + 12] = SOURCES.indexOf(a.source);
    ints[o + 13] = a.caseIndex;
    const m = k * NUMS;
    nums[m] = a.durationMs ?? Number.NaN;
    nums[m + 1] = a.timestamp ?? Number.NaN;
    nums[m + 2] = a.line ?? Number.NaN;
  }
  return { count: n, strings: strings.join(SEPARATOR), ints, nums };
}

export function decodeAttempts(encoded: EncodedAttempts): JunitAttempt[] {
  const strings = encoded.count === 0 ? [] : encoded.strings.split(SEPARATOR);
  const { ints, nums } = encoded;
  const str = (i: number): string | null => (i < 0 ? null : (strings[i] as string));
  const num = (x: number): number | null => (Number.isNaN(x) ? null : x);
  const attempts: JunitAttempt[] = new Array(encoded.count);
  for (let k = 0; k < encoded.count; k++) {
    const o = k * INTS;
    const m = k * NUMS;
    const kind = ints[o + 7] as number;
    attempts[k] = {
      name: strings[ints[o] as number] as string,
      classname: str(ints[o + 1] as number),
      file: str(ints[o + 2] as number),
      parent: str(ints[o + 3] as number),
      suite: str(ints[o + 4] as number),
      customId: str(ints[o + 5] as number),
      line: num(nums[m + 2] as number),
      outcome: OUTCOMES[ints[o + 6] as number] as AttemptOutcome,
      failureKind: kind < 0 ? null : (KINDS[kind] as JunitAttempt['failureKind']),
      failureMessage: str(ints[o + 8] as number),
      failureType: str(ints[o + 9] as number),
      failureText: str(ints[o + 10] as number),
      durationMs: num(nums[m] as number),
      timestamp: num(nums[m + 1] as number),
      retryIndex: ints[o + 11] as number,
      source: SOURCES[ints[o + 12] as number] as AttemptSource,
      caseIndex: ints[o + 13] as number,
    };
  }
  return attempts;
}
