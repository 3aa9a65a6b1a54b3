// Walks the element structure of a JUnit document: suites, testcases and their result children.
import type { CaseTexts, OpenCase, ResultElement, SuiteContext } from './case.ts';
import { addResult, appendText, isFlakyMarkedFailed, openCase, resultCount } from './case.ts';
import type { Position, ProblemList } from './problems.ts';
import { JunitFileError } from './problems.ts';
import type { JunitLimits } from './types.ts';
import { detach, KeptText, optionalText, parseTimestampMs } from './values.ts';

type Attributes = Record<string, string>;

/** What an open element is, as far as this parser cares (small integers: the frame stack is hot). */
type Frame = number;
/** The `<testsuites>` root. */
const ROOT: Frame = 0;
/** A `<testsuite>` (root or nested). */
const SUITE: Frame = 1;
/** A named `<testcase>` inside a suite or the root. */
const CASE: Frame = 2;
/** A failure, error, skipped, flaky or rerun element inside a testcase. */
const RESULT: Frame = 3;
/** A `<stackTrace>` inside a result element (Surefire, nextest). */
const STACK_TRACE: Frame = 4;
/** Anything else (properties, system-out, unknown elements); its text is ignored. */
const OTHER: Frame = 5;

export interface WalkerDeps {
  limits: JunitLimits;
  problems: ProblemList;
  /** Current position in the input, for problems. */
  position(): Position;
  /** Called once per finished, named testcase, in file order. */
  onCase(testCase: OpenCase): void;
  /** Testcase strings may be slices of the input (JunitParserOptions.keepSlices). */
  keepSlices?: boolean;
}

const IDENTITY_ATTRIBUTES = ['name', 'classname', 'file', 'filepath', 'id'] as const;

/** Tracks open elements and hands each finished testcase to `deps.onCase`. Throws JunitFileError on limits. */
export class DocumentWalker {
  private readonly frames: Frame[] = [];
  private depth = 0;
  private readonly suites: SuiteContext[] = [];
  private readonly base: SuiteContext = { parent: null, suite: null, file: null, timestamp: null };
  private current: OpenCase | null = null;
  private result: ResultElement | null = null;
  private caseIndex = 0;
  private root = false;
  private readonly limits: JunitLimits;
  private readonly texts: CaseTexts;

  constructor(private readonly deps: WalkerDeps) {
    this.limits = deps.limits;
    const max = deps.limits.maxNameChars;
    this.texts = {
      name: new KeptText(max, deps.keepSlices),
      classname: new KeptText(max, deps.keepSlices),
      file: new KeptText(max, deps.keepSlices),
      customId: new KeptText(max, deps.keepSlices),
    };
  }

  get rootSeen(): boolean {
    return this.root;
  }

  /**
   * `span` is an upper bound on the length of any attribute value of this tag (the number of
   * characters read since the previous tag event): values cannot be longer than the text they
   * were read from, so the per-attribute length checks are skipped when `span` is within them.
   */
  openTag(name: string, attrs: Attributes, span: number): void {
    const limits = this.limits;
    if (this.depth >= limits.maxDepth) {
      this.fail(`elements are nested more than ${limits.maxDepth} levels deep`);
    }
    if (span > limits.maxAttributeChars) this.checkAttributes(name, attrs);
    if (span > limits.maxNameChars && (name === 'testcase' || name === 'testsuite'))
      this.warnTruncated(name, attrs);
    const frame = this.classify(name, attrs);
    this.frames[this.depth++] = frame;
  }

  closeTag(): void {
    if (this.depth === 0) return;
    const frame = this.frames[--this.depth];
    if (frame === SUITE) this.suites.pop();
    else if (frame === CASE) this.finishCase();
    else if (frame === RESULT) this.result = null;
  }

  /** Whether `text` would keep anything now, i.e. the innermost element is a result or its stack trace. */
  wantsText(): boolean {
    if (this.result === null) return false;
    const frame = this.frames[this.depth - 1];
    return frame === RESULT || frame === STACK_TRACE;
  }

  text(text: string): void {
    const result = this.result;
    if (result === null) return;
    const frame = this.frames[this.depth - 1];
    if (frame === RESULT) appendText(result.text, text);
    else if (frame === STACK_TRACE) appendText(result.stackTrace, text);
  }

  private fail(message: string): never {
    throw new JunitFileError(message, this.deps.position());
  }

  private checkAttributes(tag: string, attrs: Attributes): void {
    const max = this.limits.maxAttributeChars;
    for (const key in attrs) {
      const value = attrs[key] ?? '';
      if (value.length > max) {
        this.fail(`attribute "${key}" on <${tag}> is ${value.length} characters long (limit ${max})`);
      }
    }
  }

  private warnTruncated(tag: string, attrs: Attributes): void {
    const max = this.limits.maxNameChars;
    for (const key of IDENTITY_ATTRIBUTES) {
      const value = attrs[key];
      if (value !== undefined && value.length > max) {
        const message = `<${tag}> attribute "${key}" truncated from ${value.length} to ${max} characters`;
        this.deps.problems.warn(message, this.deps.position());
      }
    }
  }

  private classify(name: string, attrs: Attributes): Frame {
    if (this.depth === 0) return this.openRoot(name, attrs);
    const parent = this.frames[this.depth - 1];
    if (parent === SUITE || parent === ROOT) {
      if (name === 'testcase') return this.startCase(attrs);
      if (name === 'testsuite') return this.pushSuite(attrs);
      return OTHER;
    }
    if (parent === CASE) return this.startResult(name, attrs);
    if (parent === RESULT && name === 'stackTrace') return STACK_TRACE;
    return OTHER;
  }

  private openRoot(name: string, attrs: Attributes): Frame {
    this.root = true;
    if (name === 'testsuites') {
      this.base.timestamp = parseTimestampMs(attrs['timestamp']);
      return ROOT;
    }
    if (name === 'testsuite') return this.pushSuite(attrs);
    return this.fail(`root element is <${name}>, expected <testsuites> or <testsuite>`);
  }

  /** parent = outermost suite name; file and timestamp are inherited from outer suites when missing. */
  private pushSuite(attrs: Attributes): Frame {
    const max = this.limits.maxNameChars;
    const outer = this.suites.at(-1) ?? this.base;
    const name = keep(optionalText(attrs['name'], max));
    const ownFile = keep(optionalText(attrs['file'] ?? attrs['filepath'], max));
    this.suites.push({
      parent: this.suites.length === 0 ? name : outer.parent,
      suite: name,
      file: ownFile ?? outer.file,
      timestamp: parseTimestampMs(attrs['timestamp']) ?? outer.timestamp,
    });
    return SUITE;
  }

  private startCase(attrs: Attributes): Frame {
    const context = this.suites.at(-1) ?? this.base;
    const opened = openCase(attrs, context, this.caseIndex, this.texts);
    if (opened === null) {
      this.deps.problems.warn('<testcase> without a name attribute ignored', this.deps.position());
      return OTHER;
    }
    this.caseIndex++;
    this.current = opened;
    return CASE;
  }

  private startResult(name: string, attrs: Attributes): Frame {
    if (this.current === null) return OTHER;
    const added = addResult(this.current, name, attrs, this.limits, this.deps.keepSlices);
    if (added === null) return OTHER;
    const max = this.limits.maxResultsPerTestcase;
    if (resultCount(this.current) > max) this.fail(`<testcase> has more than ${max} result/retry elements`);
    this.result = added;
    return RESULT;
  }

  private finishCase(): void {
    const finished = this.current;
    this.current = null;
    if (finished === null) return;
    if (isFlakyMarkedFailed(finished)) {
      this.deps.problems.warn(
        `testcase "${finished.name}" reports a failure but has flaky elements (its last attempt passed); recorded as passed`,
        this.deps.position(),
      );
    }
    this.deps.onCase(finished);
  }
}

function keep(text: string | null): string | null {
  return text === null ? null : detach(text);
}
