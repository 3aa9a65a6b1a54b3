// Walks the element structure of a JUnit document: suites, testcases and their result children.
import type { OpenCase, ResultElement, SuiteContext } from './case.ts';
import { addResult, appendText, isFlakyMarkedFailed, openCase, resultCount } from './case.ts';
import type { Position, ProblemList } from './problems.ts';
import { JunitFileError } from './problems.ts';
import type { JunitLimits } from './types.ts';
import { optionalText, parseTimestampMs } from './values.ts';

type Attributes = Record<string, string>;

/** What an open element is, as far as this parser cares. */
type Frame =
  /** The `<testsuites>` root. */
  | 'root'
  /** A `<testsuite>` (root or nested). */
  | 'suite'
  /** A named `<testcase>` inside a suite or the root. */
  | 'case'
  /** A failure, error, skipped, flaky or rerun element inside a testcase. */
  | 'result'
  /** A `<stackTrace>` inside a result element (Surefire, nextest). */
  | 'stackTrace'
  /** Anything else (properties, system-out, unknown elements); its text is ignored. */
  | 'other';

export interface WalkerDeps {
  limits: JunitLimits;
  problems: ProblemList;
  /** Current position in the input, for problems. */
  position(): Position;
  /** Called once per finished, named testcase, in file order. */
  onCase(testCase: OpenCase): void;
}

const IDENTITY_ATTRIBUTES = ['name', 'classname', 'file', 'filepath', 'id'] as const;

/** Tracks open elements and hands each finished testcase to `deps.onCase`. Throws JunitFileError on limits. */
export class DocumentWalker {
  private readonly frames: Frame[] = [];
  private readonly suites: SuiteContext[] = [];
  private readonly base: SuiteContext = { parent: null, suite: null, file: null, timestamp: null };
  private current: OpenCase | null = null;
  private result: ResultElement | null = null;
  private caseIndex = 0;
  private root = false;

  constructor(private readonly deps: WalkerDeps) {}

  get rootSeen(): boolean {
    return this.root;
  }

  openTag(name: string, attrs: Attributes): void {
    const { limits } = this.deps;
    if (this.frames.length >= limits.maxDepth) {
      this.fail(`elements are nested more than ${limits.maxDepth} levels deep`);
    }
    this.checkAttributes(name, attrs);
    if (name === 'testcase' || name === 'testsuite') this.warnTruncated(name, attrs);
    this.frames.push(this.classify(name, attrs));
  }

  closeTag(): void {
    const frame = this.frames.pop();
    if (frame === 'suite') this.suites.pop();
    else if (frame === 'case') this.finishCase();
    else if (frame === 'result') this.result = null;
  }

  text(text: string): void {
    const frame = this.frames.at(-1);
    if (this.result === null) return;
    if (frame === 'result') appendText(this.result.text, text);
    else if (frame === 'stackTrace') appendText(this.result.stackTrace, text);
  }

  private fail(message: string): never {
    throw new JunitFileError(message, this.deps.position());
  }

  private checkAttributes(tag: string, attrs: Attributes): void {
    const max = this.deps.limits.maxAttributeChars;
    for (const key in attrs) {
      const value = attrs[key] ?? '';
      if (value.length > max) {
        this.fail(`attribute "${key}" on <${tag}> is ${value.length} characters long (limit ${max})`);
      }
    }
  }

  private warnTruncated(tag: string, attrs: Attributes): void {
    const max = this.deps.limits.maxNameChars;
    for (const key of IDENTITY_ATTRIBUTES) {
      const value = attrs[key];
      if (value !== undefined && value.length > max) {
        const message = `<${tag}> attribute "${key}" truncated from ${value.length} to ${max} characters`;
        this.deps.problems.warn(message, this.deps.position());
      }
    }
  }

  private classify(name: string, attrs: Attributes): Frame {
    const parent = this.frames.at(-1);
    if (parent === undefined) return this.openRoot(name, attrs);
    if (parent === 'root' || parent === 'suite') {
      if (name === 'testsuite') return this.pushSuite(attrs);
      if (name === 'testcase') return this.startCase(attrs);
      return 'other';
    }
    if (parent === 'case') return this.startResult(name, attrs);
    if (parent === 'result' && name === 'stackTrace') return 'stackTrace';
    return 'other';
  }

  private openRoot(name: string, attrs: Attributes): Frame {
    this.root = true;
    if (name === 'testsuites') {
      this.base.timestamp = parseTimestampMs(attrs['timestamp']);
      return 'root';
    }
    if (name === 'testsuite') return this.pushSuite(attrs);
    return this.fail(`root element is <${name}>, expected <testsuites> or <testsuite>`);
  }

  /** parent = outermost suite name; file and timestamp are inherited from outer suites when missing. */
  private pushSuite(attrs: Attributes): Frame {
    const max = this.deps.limits.maxNameChars;
    const outer = this.suites.at(-1) ?? this.base;
    const name = optionalText(attrs['name'], max);
    const ownFile = optionalText(attrs['file'] ?? attrs['filepath'], max);
    this.suites.push({
      parent: this.suites.length === 0 ? name : outer.parent,
      suite: name,
      file: ownFile ?? outer.file,
      timestamp: parseTimestampMs(attrs['timestamp']) ?? outer.timestamp,
    });
    return 'suite';
  }

  private startCase(attrs: Attributes): Frame {
    const context = this.suites.at(-1) ?? this.base;
    const opened = openCase(attrs, context, this.caseIndex, this.deps.limits);
    if (opened === null) {
      this.deps.problems.warn('<testcase> without a name attribute ignored', this.deps.position());
      return 'other';
    }
    this.caseIndex++;
    this.current = opened;
    return 'case';
  }

  private startResult(name: string, attrs: Attributes): Frame {
    if (this.current === null) return 'other';
    const added = addResult(this.current, name, attrs, this.deps.limits);
    if (added === null) return 'other';
    const max = this.deps.limits.maxResultsPerTestcase;
    if (resultCount(this.current) > max) this.fail(`<testcase> has more than ${max} result/retry elements`);
    this.result = added;
    return 'result';
  }

  private finishCase(): void {
    const finished = this.current;
    this.current = null;
    if (finished === null) return;
    if (isFlakyMarkedFailed(finished)) {
      this.deps.problems.warn(
        `testcase "${finished.fields.name}" reports a failure but has flaky elements (its last attempt passed); recorded as passed`,
        this.deps.position(),
      );
    }
    this.deps.onCase(finished);
  }
}
