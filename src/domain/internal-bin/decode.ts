/**
 * trunk-analytics-cli's `internal.bin` (a protobuf TestReport) → the attempts of our parsed test
 * model (domain/junit's JunitAttempt), streamed: bytes are written as they arrive, runs are decoded
 * one at a time (lib/protobuf-stream.ts bounds each), and attempts leave in batches. It has the JUnit
 * parser's contract: batches are provisional until close() says ok; a refused file gets one error
 * and nothing more is delivered after it. What one file may cost is bounded by `maxAttempts` runs
 * and `maxRunBytes` per run (strings cut to the JUnit limits), never by what the file declares.
 *
 * Mapping (from the CLI's JUnit → TestCaseRun conversion, context/src/junit/parser.rs, and the rspec
 * plugin, test_report/src/report.rs): name, classname, file, parent_name (our parent and suite),
 * id (a custom id, as a JUnit `id` attribute), line_number (else the deprecated line), status
 * SUCCESS → passed, FAILURE → failed, SKIPPED → skipped (UNSPECIFIED: skipped, with a warning),
 * started_at → timestamp (epoch 0 is the CLI's "unknown"), finished_at − started_at → duration,
 * test_output {text, message} (else the deprecated status_output_message) → failure text and message.
 * Retries are numbered per identity in file order, as the JUnit parser numbers them (an rspec retry's
 * attempt_index gives the same order). is_quarantined, code owners and Bazel labels are not read:
 * the server decides quarantine itself and takes owners from the bundle's CODEOWNERS.
 */
import { createProtoStream, type ProtoStream } from '../../lib/protobuf-stream.ts';
import { createRetryCounter, type RetryCounter } from '../junit/retry-counter.ts';
import {
  DEFAULT_JUNIT_LIMITS,
  type JunitAttempt,
  type JunitCounts,
  type JunitFileSummary,
  type JunitProblem,
} from '../junit/types.ts';
import { truncate } from '../junit/values.ts';
import { detectLayout, type Layout } from './layout.ts';
import {
  decodeRun,
  REPORT_RUNS_PATH,
  RESULT_RUNS_PATH,
  RUN_STATUS,
  type WireRun,
  type WireTimestamp,
} from './schema.ts';

export interface InternalBinLimits {
  /** Runs one file may hold; more refuse the file. */
  readonly maxAttempts: number;
  /** Bytes of one encoded run; a larger one refuses the file. */
  readonly maxRunBytes: number;
  /** Identity strings (name, classname, file, parent, id) are cut to this. */
  readonly maxNameChars: number;
  /** Failure text and message are cut to this. */
  readonly maxFailureTextChars: number;
  /** Warnings kept; the rest are counted in a last one. */
  readonly maxWarnings: number;
}

export const DEFAULT_INTERNAL_BIN_LIMITS: InternalBinLimits = {
  maxAttempts: DEFAULT_JUNIT_LIMITS.maxAttempts,
  maxRunBytes: 16 * 1024 * 1024,
  maxNameChars: DEFAULT_JUNIT_LIMITS.maxNameChars,
  maxFailureTextChars: DEFAULT_JUNIT_LIMITS.maxFailureTextChars,
  maxWarnings: DEFAULT_JUNIT_LIMITS.maxWarnings,
};

export interface InternalBinOptions {
  /** Receives the attempts in file order, in batches of at most `batchSize` (default 1,000). */
  readonly onAttempts: (batch: JunitAttempt[]) => void;
  readonly batchSize?: number;
  readonly limits?: Partial<InternalBinLimits>;
  /** The error for a file over `limits.maxAttempts` (default: "… more than N test case runs"). */
  readonly attemptsLimitMessage?: string;
}

export interface InternalBinDecoder {
  /** The next bytes of the file. Never throws on bad input. */
  write(bytes: Uint8Array): void;
  /** Whether the file was refused: writing more does nothing. */
  readonly rejected: boolean;
  /** Ends the file: delivers the last batch (only if ok) and returns the summary. */
  close(): JunitFileSummary;
}

export function createInternalBinDecoder(options: InternalBinOptions): InternalBinDecoder {
  return new Decoder(options);
}

/** Before this (1970-01-02) a start time is the CLI's "unknown" (epoch 0), as for JUnit timestamps. */
const EARLIEST_REAL_TIMESTAMP = 86_400_000;

class Decoder implements InternalBinDecoder {
  readonly #limits: InternalBinLimits;
  /** Made once the layout is known (#detect); until then the bytes wait in #head. */
  #stream: ProtoStream | undefined;
  #head = new Uint8Array(0);
  #headLength = 0;
  readonly #retries: RetryCounter = createRetryCounter();
  readonly #counts: JunitCounts = { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 };
  readonly #problems: JunitProblem[] = [];
  #warnings = 0;
  #unspecified = 0;
  #nameless = 0;
  #batch: JunitAttempt[] = [];
  #error: string | undefined;
  /** The file went past a limit (not a format error): the message to answer. */
  #overLimit: string | undefined;

  constructor(private readonly options: InternalBinOptions) {
    this.#limits = { ...DEFAULT_INTERNAL_BIN_LIMITS, ...options.limits };
  }

  get rejected(): boolean {
    return this.#error !== undefined;
  }

  write(bytes: Uint8Array): void {
    if (this.#error !== undefined) return;
    if (this.#stream === undefined) {
      this.#hold(bytes);
      const layout = detectLayout(this.#head.subarray(0, this.#headLength), this.#limits.maxRunBytes);
      if (layout === undefined) return;
      bytes = this.#start(layout);
    }
    const refused = this.#stream?.push(bytes);
    if (refused !== undefined) this.#reject(refused);
  }

  close(): JunitFileSummary {
    if (this.#error === undefined && this.#stream === undefined) {
      const layout = detectLayout(this.#head.subarray(0, this.#headLength), this.#limits.maxRunBytes);
      const held = this.#start(layout ?? 'report');
      const refused = held.length > 0 ? (this.#stream as ProtoStream | undefined)?.push(held) : undefined;
      if (refused !== undefined) this.#reject(refused);
    }
    if (this.#error === undefined) {
      const refused = this.#stream?.end();
      if (refused !== undefined) this.#reject(refused);
    }
    if (this.#error !== undefined) {
      // A refused file ingests nothing, so it counts nothing (as a rejected JUnit file).
      const warnings = this.#problems.filter((p) => p.severity === 'warning');
      return {
        ok: false,
        counts: { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 },
        problems: [...warnings, { severity: 'error', message: this.#error }],
      };
    }
    if (this.#batch.length > 0) this.#deliver();
    if (this.#unspecified > 0)
      this.#warn(
        `${this.#unspecified} test case run(s) have no status (TEST_CASE_RUN_STATUS_UNSPECIFIED): counted as skipped`,
      );
    if (this.#nameless > 0) this.#warn(`${this.#nameless} test case run(s) without a name ignored`);
    if (this.#counts.attempts === 0 && this.#nameless === 0)
      this.#warn('internal.bin holds no test case runs');
    if (this.#warnings > this.#limits.maxWarnings)
      this.#problems.push({
        severity: 'warning',
        message: `${this.#warnings - this.#limits.maxWarnings} more warning(s) not shown`,
      });
    return { ok: true, counts: this.#counts, problems: this.#problems };
  }

  /** Keeps the first bytes until the layout is known (at most maxRunBytes and a little). */
  #hold(bytes: Uint8Array): void {
    const needed = this.#headLength + bytes.length;
    if (needed > this.#head.length) {
      const cap = this.#limits.maxRunBytes + 1024;
      const grown = new Uint8Array(Math.max(needed, Math.min(Math.max(this.#head.length * 2, 4096), cap)));
      grown.set(this.#head.subarray(0, this.#headLength));
      this.#head = grown;
    }
    this.#head.set(bytes, this.#headLength);
    this.#headLength = needed;
  }

  /** Starts reading in this layout; answers the bytes held so far, to push. */
  #start(layout: Layout): Uint8Array {
    this.#stream = createProtoStream({
      path: layout === 'report' ? REPORT_RUNS_PATH : RESULT_RUNS_PATH,
      maxMessageBytes: this.#limits.maxRunBytes,
      onMessage: (bytes) => this.#run(bytes),
    });
    const held = this.#head.subarray(0, this.#headLength);
    this.#head = new Uint8Array(0);
    this.#headLength = 0;
    return held;
  }

  #reject(reason: string): void {
    // A limit is not a format error: its own message, as is.
    this.#error = this.#overLimit ?? `internal.bin is not a valid test report: ${reason}`;
    this.#batch = [];
  }

  #warn(message: string): void {
    this.#warnings++;
    if (this.#warnings <= this.#limits.maxWarnings) this.#problems.push({ severity: 'warning', message });
  }

  #deliver(): void {
    const batch = this.#batch;
    this.#batch = [];
    this.options.onAttempts(batch);
  }

  /** One TestCaseRun's bytes. */
  #run(bytes: Uint8Array): string | undefined {
    let run: WireRun;
    try {
      run = decodeRun(bytes);
    } catch (error) {
      return `a test case run could not be decoded: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (run.name === '') {
      this.#nameless++;
      return undefined;
    }
    if (this.#counts.attempts >= this.#limits.maxAttempts) {
      this.#overLimit =
        this.options.attemptsLimitMessage ??
        `internal.bin has more than ${this.#limits.maxAttempts} test case runs`;
      return this.#overLimit;
    }
    const attempt = this.#attempt(run);
    const counts = this.#counts;
    counts.testcases++;
    counts.attempts++;
    if (attempt.outcome === 'failed') counts.failures++;
    if (attempt.outcome === 'skipped') counts.skipped++;
    if (attempt.retryIndex > 0) counts.retries++;
    this.#batch.push(attempt);
    if (this.#batch.length >= (this.options.batchSize ?? 1000)) this.#deliver();
    return undefined;
  }

  #attempt(run: WireRun): JunitAttempt {
    const { maxNameChars, maxFailureTextChars } = this.#limits;
    const text = (value: string) => (value === '' ? null : truncate(value, maxNameChars));
    const parent = text(run.parentName);
    const outcome =
      run.status === RUN_STATUS.SUCCESS
        ? 'passed'
        : run.status === RUN_STATUS.FAILURE
          ? 'failed'
          : run.status === RUN_STATUS.SKIPPED
            ? 'skipped'
            : undefined;
    if (outcome === undefined) this.#unspecified++;
    const failed = outcome === 'failed';
    const output = run.output;
    const body = (output === null ? run.statusOutputMessage : output.text).trimEnd();
    const message = output?.message ?? '';
    const started = millis(run.startedAt);
    const duration = elapsedMs(run.startedAt, run.finishedAt);
    const line = run.lineNumber !== null ? run.lineNumber.number : run.line;
    const attempt: JunitAttempt = {
      name: truncate(run.name, maxNameChars),
      classname: text(run.classname),
      file: text(run.file),
      parent,
      suite: parent,
      customId: text(run.id),
      line: line > 0 ? line : null,
      outcome: outcome ?? 'skipped',
      failureKind: failed ? 'failure' : null,
      failureMessage: failed && message !== '' ? truncate(message, maxFailureTextChars) : null,
      failureType: null,
      failureText: failed && body !== '' ? truncate(body, maxFailureTextChars) : null,
      durationMs: duration,
      timestamp: started !== null && started >= EARLIEST_REAL_TIMESTAMP ? Math.round(started) : null,
      retryIndex: 0,
      source: 'testcase',
      caseIndex: this.#counts.testcases,
    };
    attempt.retryIndex = this.#retries.next(attempt);
    return attempt;
  }
}

function seconds(ts: WireTimestamp): number {
  return typeof ts.seconds === 'number' ? ts.seconds : ts.seconds.high * 2 ** 32 + (ts.seconds.low >>> 0);
}

/** A Timestamp in milliseconds since the epoch (fractional), or null when absent. */
function millis(ts: WireTimestamp | null): number | null {
  if (ts === null) return null;
  const value = seconds(ts) * 1000 + ts.nanos / 1e6;
  return Number.isFinite(value) ? value : null;
}

/**
 * finished_at − started_at in milliseconds, rounded to the microsecond as JUnit durations are (the
 * CLI writes finished = started + the JUnit time); null when either is absent or it is negative.
 */
function elapsedMs(start: WireTimestamp | null, end: WireTimestamp | null): number | null {
  if (start === null || end === null) return null;
  const micros = (seconds(end) - seconds(start)) * 1_000_000 + (end.nanos - start.nanos) / 1000;
  if (!Number.isFinite(micros) || micros < 0) return null;
  return Math.round(micros) / 1000;
}
