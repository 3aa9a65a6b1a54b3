// One <testcase> while it is open, and how it turns into attempt records.
import type { AttemptOutcome, AttemptSource, JunitAttempt, JunitLimits } from './types.ts';
import { optionalText, parseDurationMs, parseLine, parseTimestampMs, truncate } from './values.ts';

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

export interface OpenCase {
  fields: Omit<JunitAttempt, RecordOnlyField>;
  durationMs: number | null;
  timestamp: number | null;
  notRun: boolean;
  primary: ResultElement | null;
  flaky: ResultElement[];
  reruns: ResultElement[];
}

type RecordOnlyField =
  | 'outcome'
  | 'failureKind'
  | 'failureMessage'
  | 'failureType'
  | 'failureText'
  | 'durationMs'
  | 'timestamp'
  | 'retryIndex'
  | 'source';

const RESULT_TAGS: Record<string, Pick<ResultElement, 'outcome' | 'failureKind' | 'source'>> = {
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

/** Opens a testcase; returns null when it has no name (such a testcase cannot be identified). */
export function openCase(
  attrs: Attributes,
  context: SuiteContext,
  caseIndex: number,
  limits: JunitLimits,
): OpenCase | null {
  const name = optionalText(attrs['name'], limits.maxNameChars);
  if (name === null) return null;
  const max = limits.maxNameChars;
  const file = optionalText(attrs['file'] ?? attrs['filepath'], max) ?? context.file;
  return {
    fields: {
      name,
      classname: optionalText(attrs['classname'], max),
      file,
      parent: context.parent,
      suite: context.suite,
      customId: optionalText(attrs['id'], max),
      line: parseLine(attrs['line']),
      caseIndex,
    },
    durationMs: parseDurationMs(attrs['time']),
    timestamp: parseTimestampMs(attrs['timestamp']) ?? context.timestamp,
    notRun: isGoogleTestNotRun(attrs),
    primary: null,
    flaky: [],
    reruns: [],
  };
}

/** GoogleTest marks tests that did not run with status="notrun" or result="skipped"/"suppressed". */
function isGoogleTestNotRun(attrs: Attributes): boolean {
  const result = attrs['result'];
  return attrs['status'] === 'notrun' || result === 'skipped' || result === 'suppressed';
}

/** Creates the result element for `tag` and attaches it to the case. Returns it, or null if ignored. */
export function addResult(
  testCase: OpenCase,
  tag: string,
  attrs: Attributes,
  limits: JunitLimits,
): ResultElement | null {
  const kind = RESULT_TAGS[tag];
  if (kind === undefined) return null;
  if (kind.source === 'testcase' && testCase.primary !== null) return null;
  const result: ResultElement = {
    outcome: kind.outcome,
    failureKind: kind.failureKind,
    source: kind.source,
    message: optionalText(attrs['message'], limits.maxFailureTextChars),
    type: optionalText(attrs['type'], limits.maxNameChars),
    durationMs: parseDurationMs(attrs['time']),
    timestamp: parseTimestampMs(attrs['timestamp']),
    text: { value: '', max: limits.maxFailureTextChars },
    stackTrace: { value: '', max: limits.maxFailureTextChars },
  };
  if (kind.source === 'testcase') testCase.primary = result;
  else if (kind.source === 'flaky') testCase.flaky.push(result);
  else testCase.reruns.push(result);
  return result;
}

export function resultCount(testCase: OpenCase): number {
  return testCase.flaky.length + testCase.reruns.length + (testCase.primary === null ? 0 : 1);
}

/** True when the case reports a failure although flaky elements say its last attempt passed (nextest flaky-fail). */
export function isFlakyMarkedFailed(testCase: OpenCase): boolean {
  return testCase.flaky.length > 0 && testCase.primary?.outcome === 'failed';
}

/**
 * Attempts in execution order: flaky attempts (failed, before the final run), then the testcase's
 * own result, then reruns (failed, after the first failure). With flaky elements the final run
 * passed, even if the testcase also carries a failure verdict. retryIndex is left at 0 for the
 * caller to number across the file.
 */
export function attemptsOf(testCase: OpenCase): JunitAttempt[] {
  const flaky = testCase.flaky.map((result) => fromResult(testCase, result, result));
  const primary = isFlakyMarkedFailed(testCase) ? null : testCase.primary;
  const main = fromResult(testCase, primary, {
    durationMs: testCase.durationMs,
    timestamp: testCase.timestamp,
  });
  const reruns = testCase.reruns.map((result) => fromResult(testCase, result, result));
  return [...flaky, main, ...reruns];
}

/** Builds the record field by field: on Node 20 a spread plus extra keys costs microseconds per object. */
function fromResult(
  testCase: OpenCase,
  result: ResultElement | null,
  timing: { durationMs: number | null; timestamp: number | null },
): JunitAttempt {
  const fields = testCase.fields;
  const failed = result !== null && result.outcome === 'failed';
  return {
    name: fields.name,
    classname: fields.classname,
    file: fields.file,
    parent: fields.parent,
    suite: fields.suite,
    customId: fields.customId,
    line: fields.line,
    outcome: result?.outcome ?? (testCase.notRun ? 'skipped' : 'passed'),
    failureKind: failed ? result.failureKind : null,
    failureMessage: failed ? result.message : null,
    failureType: failed ? result.type : null,
    failureText: failed ? failureText(result) : null,
    durationMs: timing.durationMs,
    timestamp: timing.timestamp ?? testCase.timestamp,
    retryIndex: 0,
    source: result?.source ?? 'testcase',
    caseIndex: fields.caseIndex,
  };
}

function failureText(result: ResultElement): string | null {
  const body = result.text.value.trimEnd();
  const stack = result.stackTrace.value.trimEnd();
  const joined = body !== '' && stack !== '' ? `${body}\n${stack}` : body || stack;
  return joined === '' ? null : truncate(joined, result.text.max);
}
