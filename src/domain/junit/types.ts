// Public types of the streaming JUnit XML parser.

/** Outcome of one execution (attempt) of a test. */
export type AttemptOutcome =
  /** The attempt ran and passed. */
  | 'passed'
  /** The attempt ran and failed (assertion failure or error). */
  | 'failed'
  /** The attempt did not run (skipped, disabled, GoogleTest notrun/suppressed). */
  | 'skipped';

/** Which element of the report an attempt comes from. */
export type AttemptSource =
  /** The `<testcase>` itself (its own `<failure>`/`<error>`/`<skipped>` or nothing). */
  | 'testcase'
  /** A Surefire/nextest `<flakyFailure>` or `<flakyError>`: a failed attempt before a final pass. */
  | 'flaky'
  /** A Surefire/nextest `<rerunFailure>` or `<rerunError>`: a failed rerun after the first failure. */
  | 'rerun';

/** One execution of one test, as reported by the file. */
export interface JunitAttempt {
  name: string;
  classname: string | null;
  /** testcase `file` → testcase `filepath` → nearest enclosing suite `file`/`filepath`. */
  file: string | null;
  /** Name of the OUTERMOST `<testsuite>` (Trunk's `parent`). */
  parent: string | null;
  /** Name of the innermost enclosing `<testsuite>`. */
  suite: string | null;
  /** The testcase `id` attribute (custom test id), if any. */
  customId: string | null;
  /** testcase `line`, when it is a positive integer. */
  line: number | null;
  outcome: AttemptOutcome;
  /** 'failure' for assertion failures, 'error' for unexpected errors, null unless failed. */
  failureKind: 'failure' | 'error' | null;
  /** The `message` attribute of the failure element (truncated). */
  failureMessage: string | null;
  /** The `type` attribute of the failure element, e.g. `AssertionError` (truncated). */
  failureType: string | null;
  /** Body text (and `<stackTrace>`) of the failure element, trimmed and truncated. */
  failureText: string | null;
  durationMs: number | null;
  /** Epoch ms from the attempt, testcase or nearest suite `timestamp`; zone-less times are UTC. */
  timestamp: number | null;
  /** 0 for the first attempt of this identity in the file, then 1, 2, … in execution order. */
  retryIndex: number;
  source: AttemptSource;
  /** 0-based position of the `<testcase>` element in the file (attempts of one element share it). */
  caseIndex: number;
}

export interface JunitProblem {
  severity: 'error' | 'warning';
  message: string;
  /** 1-based line in the decoded text, when known. */
  line?: number;
  /** 1-based column (in characters) when known. */
  column?: number;
}

export interface JunitCounts {
  /** `<testcase>` elements turned into attempts. */
  testcases: number;
  /** Attempt records produced (≥ testcases when there are retries). */
  attempts: number;
  /** Attempts with outcome 'failed'. */
  failures: number;
  /** Attempts with outcome 'skipped'. */
  skipped: number;
  /** Attempts with retryIndex > 0. */
  retries: number;
}

/**
 * Result of a whole file. When `ok` is false the file is rejected: the caller must discard
 * EVERY attempt it received through `onAttempts` for this parser (nothing more is delivered
 * after the error). `problems` then holds exactly one error (plus any earlier warnings).
 */
export interface JunitFileSummary {
  ok: boolean;
  counts: JunitCounts;
  problems: JunitProblem[];
}

export interface JunitLimits {
  /** name, classname, file, suite names and custom id are cut to this many characters. */
  maxNameChars: number;
  /** failure text and failure message are cut to this many characters. */
  maxFailureTextChars: number;
  /** Deepest allowed element nesting; deeper ⇒ file error. */
  maxDepth: number;
  /** Most attempts one file may produce; more ⇒ file error. */
  maxAttempts: number;
  /** Most retry/result elements one testcase may carry; more ⇒ file error. */
  maxResultsPerTestcase: number;
  /** Longest allowed single attribute value; longer ⇒ file error. */
  maxAttributeChars: number;
  /** Longest allowed single text/CDATA node; longer ⇒ file error. */
  maxTextChars: number;
  /** Text before the root element (declaration, comments); longer ⇒ file error. */
  maxPrologChars: number;
  /** Warnings kept per file; the rest are counted in one final warning. */
  maxWarnings: number;
}

export const DEFAULT_JUNIT_LIMITS: Readonly<JunitLimits> = {
  maxNameChars: 1_000,
  maxFailureTextChars: 8_000,
  maxDepth: 64,
  maxAttempts: 250_000,
  maxResultsPerTestcase: 1_000,
  maxAttributeChars: 1_048_576,
  maxTextChars: 33_554_432,
  maxPrologChars: 1_048_576,
  maxWarnings: 100,
};

/**
 * Takes the attempts one at a time as they are parsed, for a caller that copies them out at once
 * (parse-worker.ts encodes them for another thread): no batch arrays, and no attempt outlives its
 * own testcase.
 */
export interface AttemptWriter {
  /**
   * The next attempt, in file order. The object is only lent: it may be reused for the next
   * attempt, so the writer copies what it keeps before returning.
   */
  add(attempt: Readonly<JunitAttempt>): void;
  /** Ends a batch (the attempts added since the last `flush`, at least one), where `onAttempts` would get one. */
  flush(): void;
}

export interface JunitParserOptions {
  /** Receives attempts in file order, in batches of at most `batchSize`. Provisional until close() says ok. */
  onAttempts(batch: JunitAttempt[]): void;
  /**
   * When given, attempts go to this writer instead of `onAttempts` (then never called), with the
   * same batches and the same contract: provisional until close() says ok, nothing after an error.
   */
  writer?: AttemptWriter;
  /** Attempts per batch; default 1,000. */
  batchSize?: number;
  limits?: Partial<JunitLimits>;
  /** The error for a file over `limits.maxAttempts` (default: "the file has more than N test attempts"). */
  attemptsLimitMessage?: string;
  /**
   * Strings in the attempts may be slices of the decoded input (no copy per string: names, failure
   * texts). Only for a caller that copies each batch out when it gets it: a slice keeps the whole
   * decoded chunk it came from alive. Batches are then also delivered once SLICE_SPAN_CHARS of
   * input went by since the last one, so a batch never holds more than that of input.
   */
  keepSlices?: boolean;
}

export interface JunitParser {
  /** Feeds the next piece of the file: decoded text, or raw bytes (UTF-8, or UTF-16 with a BOM). Never throws on bad input. */
  write(chunk: string | Uint8Array): void;
  /** Whether the file was rejected: writing more does nothing (the caller may stop reading it). */
  readonly rejected: boolean;
  /** Ends the file, delivers the last batch (only if the file is ok) and returns the summary. */
  close(): JunitFileSummary;
}
