// One <testcase> while it is open, and how it turns into attempt records.
//
// Hot path: a large report has one OpenCase per <testcase> and one JunitAttempt per attempt. Only
// the attempts (and the strings they hold) outlive the testcase: they are built field by field from
// object literals of one shape, with no intermediate arrays, and every string they keep is detached
// from saxes' chunk (see `detach`).
import type { AttemptOutcome, AttemptSource, JunitAttempt, JunitLimits } from './types.ts';
import type { KeptText } from './values.ts';
import {
  compact,
  detach,
  optionalText,
  parseDurationMs,
  parseLine,
  parseTimestampMs,
  truncate,
} from './values.ts';

type Attributes = Record<string, string>;

/** Text gathered from one element, kept to at most `max` characters (leading blanks skipped). */
export interface CappedText {
  value: string;
  max: number;
}

/** A result child of a testcase: failure, error, skipped or a retry element. */
export interface ResultElement {
  outcome: AttemptOutcome;
  failureKind: 'failure' | 'error' | null;
  source: AttemptSource;
  message: string | null;
  type: string | null;
  durationMs: number | null;
  timestamp: number | null;
  text: CappedText;
  stackTrace: CappedText;
}

/** What the enclosing suites contribute to a testcase. */
export interface SuiteContext {
  parent: string | null;
  suite: string | null;
  file: string | null;
  timestamp: number | null;
}

/** The identity and timing of an open testcase, plus the result elements seen so far. */
export interface OpenCase {
  name: string;
  classname: string | null;
  file: string | null;
  parent: string | null;
  suite: string | null;
  customId: string | null;
  line: number | null;
  caseIndex: number;
  durationMs: number | null;
  timestamp: number | null;
  notRun: boolean;
  primary: ResultElement | null;
  /** Allocated on the first flaky element (most testcases have none). */
  flaky: ResultElement[] | null;
  /** Allocated on the first rerun element. */
  reruns: ResultElement[] | null;
  /** Result elements attached so far (primary + flaky + reruns). */
  results: number;
}

type ResultKind = Pick<ResultElement, 'outcome' | 'failureKind' | 'source'>;

const RESULT_TAGS: Record<string, ResultKind> = {
  failure: { outcome: 'failed', failureKind: 'failure', source: 'testcase' },
  error: { outcome: 'failed', failureKind: 'error', source: 'testcase' },
  skipped: { outcome: 'skipped', failureKind: null, source: 'testcase' },
  flakyFailure: { outcome: 'failed', failureKind: 'failure', source: 'flaky' },
  flakyError: { outcome: 'failed', failureKind: 'error', source: 'flaky' },
  rerunFailure: { outcome: 'failed', failureKind: 'failure', source: 'rerun' },
  rerunError: { outcome: 'failed', failureKind: 'error', source: 'rerun' },
};

export function isResultTag(tag: string): boolean {
  return Object.hasOwn(RESULT_TAGS, tag);
}

export function appendText(target: CappedText, piece: string): void {
  if (target.value.length >= target.max) return;
  const text = target.value === '' ? piece.trimStart() : piece;
  target.value += truncate(text, target.max - target.value.length);
}

/** Detached, truncated identity strings; a value equal to the previous testcase's is shared with it. */
export interface CaseTexts {
  name: KeptText;
  classname: KeptText;
  file: KeptText;
  customId: KeptText;
}

/** Opens a testcase; returns null when it has no name (such a testcase cannot be identified). */
export function openCase(
  attrs: Attributes,
  context: SuiteContext,
  caseIndex: number,
  texts: CaseTexts,
): OpenCase | null {
  const nameAttr = attrs['name'];
  if (nameAttr === undefined || nameAttr === '') return null;
  const name = texts.name.of(nameAttr) as string;
  const fileAttr = attrs['file'];
  const file = texts.file.of(fileAttr === undefined ? attrs['filepath'] : fileAttr) ?? context.file;
  const status = attrs['status'];
  const result = attrs['result'];
  const timestampAttr = attrs['timestamp'];
  return {
    name,
    classname: texts.classname.of(attrs['classname']),
    file,
    parent: context.parent,
    suite: context.suite,
    customId: texts.customId.of(attrs['id']),
    line: parseLine(attrs['line']),
    caseIndex,
    durationMs: parseDurationMs(attrs['time']),
    timestamp: (timestampAttr === undefined ? null : parseTimestampMs(timestampAttr)) ?? context.timestamp,
    // GoogleTest marks tests that did not run with status="notrun" or result="skipped"/"suppressed".
    notRun: status === 'notrun' || result === 'skipped' || result === 'suppressed',
    primary: null,
    flaky: null,
    reruns: null,
    results: 0,
  };
}

/** Creates the result element for `tag` and attaches it to the case. Returns it, or null if ignored. */
export function addResult(
  testCase: OpenCase,
  tag: string,
  attrs: Attributes,
  limits: JunitLimits,
  slices = false,
): ResultElement | null {
  // Own keys only: `RESULT_TAGS[tag]` would also find Object.prototype members (<toString>, …).
  const kind = Object.hasOwn(RESULT_TAGS, tag) ? RESULT_TAGS[tag] : undefined;
  if (kind === undefined) return null;
  if (kind.source === 'testcase' && testCase.primary !== null) return null;
  const message = optionalText(attrs['message'], limits.maxFailureTextChars);
  const type = optionalText(attrs['type'], limits.maxNameChars);
  const result: ResultElement = {
    outcome: kind.outcome,
    failureKind: kind.failureKind,
    source: kind.source,
    message: message === null || slices ? message : detach(message),
    type: type === null || slices ? type : detach(type),
    durationMs: parseDurationMs(attrs['time']),
    timestamp: parseTimestampMs(attrs['timestamp']),
    text: { value: '', max: limits.maxFailureTextChars },
    stackTrace: { value: '', max: limits.maxFailureTextChars },
  };
  if (kind.source === 'testcase') testCase.primary = result;
  else if (kind.source === 'flaky') {
    if (testCase.flaky === null) testCase.flaky = [result];
    else testCase.flaky.push(result);
  } else if (testCase.reruns === null) testCase.reruns = [result];
  else testCase.reruns.push(result);
  testCase.results++;
  return result;
}

export function resultCount(testCase: OpenCase): number {
  return testCase.results;
}

/** True when the case reports a failure although flaky elements say its last attempt passed (nextest flaky-fail). */
export function isFlakyMarkedFailed(testCase: OpenCase): boolean {
  return testCase.flaky !== null && testCase.primary?.outcome === 'failed';
}

/**
 * Attempts in execution order: flaky attempts (failed, before the final run), then the testcase's
 * own result, then reruns (failed, after the first failure). With flaky elements the final run
 * passed, even if the testcase also carries a failure verdict. retryIndex is left at 0 for the
 * caller to number across the file. Calls `emit` once per attempt, in that order.
 */
export function forEachAttempt(
  testCase: OpenCase,
  emit: (attempt: JunitAttempt) => void,
  slices = false,
): void {
  const flaky = testCase.flaky;
  if (flaky !== null) {
    for (const result of flaky)
      emit(attemptOf(testCase, result, result.durationMs, result.timestamp, slices));
  }
  const primary = isFlakyMarkedFailed(testCase) ? null : testCase.primary;
  emit(attemptOf(testCase, primary, testCase.durationMs, testCase.timestamp, slices));
  const reruns = testCase.reruns;
  if (reruns !== null) {
    for (const result of reruns)
      emit(attemptOf(testCase, result, result.durationMs, result.timestamp, slices));
  }
}

/** Builds the record field by field: on Node 20 a spread plus extra keys costs microseconds per object. */
function attemptOf(
  testCase: OpenCase,
  result: ResultElement | null,
  durationMs: number | null,
  timestamp: number | null,
  slices: boolean,
): JunitAttempt {
  const failure = result !== null && result.outcome === 'failed' ? result : null;
  return {
    name: testCase.name,
    classname: testCase.classname,
    file: testCase.file,
    parent: testCase.parent,
    suite: testCase.suite,
    customId: testCase.customId,
    line: testCase.line,
    outcome: result !== null ? result.outcome : testCase.notRun ? 'skipped' : 'passed',
    failureKind: failure === null ? null : failure.failureKind,
    failureMessage: failure === null ? null : failure.message,
    failureType: failure === null ? null : failure.type,
    failureText: failure === null ? null : failureText(failure, slices),
    durationMs,
    timestamp: timestamp ?? testCase.timestamp,
    retryIndex: 0,
    source: result !== null ? result.source : 'testcase',
    caseIndex: testCase.caseIndex,
  };
}

function failureText(result: ResultElement, slices: boolean): string | null {
  const body = result.text.value.trimEnd();
  const stack = result.stackTrace.value.trimEnd();
  const joined = body !== '' && stack !== '' ? `${body}\n${stack}` : body || stack;
  if (joined === '') return null;
  const text = truncate(joined, result.text.max);
  return slices ? text : compact(text);
}
