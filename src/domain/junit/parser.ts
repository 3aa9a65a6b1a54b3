// Streaming JUnit XML parser: text or byte chunks in, batches of attempt records out.
//
// Contract: attempts handed to `onAttempts` are provisional until `close()` returns `ok: true`.
// If `ok` is false the file was rejected (malformed XML, DTD, limits, bad root, empty file):
// the caller must discard every attempt it received from this parser. After the first error no
// further batches are delivered and later writes are ignored.

import { createByteDecoder } from '../../lib/xml/decode.ts';
import { XmlScanner, type XmlScannerHandler, XmlSyntaxError } from '../../lib/xml/scanner.ts';
import type { OpenCase } from './case.ts';
import { forEachAttempt } from './case.ts';
import { DocumentWalker } from './document.ts';
import type { Position, ProblemList } from './problems.ts';
import { createProblemList, JunitFileError } from './problems.ts';
import { createRetryCounter } from './retry-counter.ts';
import type {
  AttemptWriter,
  JunitAttempt,
  JunitCounts,
  JunitFileSummary,
  JunitLimits,
  JunitParser,
  JunitParserOptions,
} from './types.ts';
import { DEFAULT_JUNIT_LIMITS } from './types.ts';
import { replaceControlChars } from './values.ts';

const DEFAULT_BATCH_SIZE = 1_000;
/** With keepSlices, a batch is delivered at the end of the write that takes it past this much input. */
export const SLICE_SPAN_CHARS = 4 * 1024 * 1024;

export function createJunitParser(options: JunitParserOptions): JunitParser {
  return new StreamingJunitParser(options);
}

class StreamingJunitParser implements JunitParser {
  private readonly limits: JunitLimits;
  private readonly batchSize: number;
  private readonly problems: ProblemList;
  private readonly counts: JunitCounts = { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 };
  private readonly retries = createRetryCounter();
  private readonly bytes = createByteDecoder();
  /** The text of the chunk being written, as the byte decoder hands it out. */
  private readonly pieces: string[] = [];
  private readonly xml: XmlScanner;
  private readonly walker: DocumentWalker;
  private batch: JunitAttempt[] = [];
  private readonly writer: AttemptWriter | undefined;
  /** Attempts handed to `writer` since its last flush. */
  private pending = 0;
  private failed = false;
  private summary: JunitFileSummary | null = null;
  private started = false;
  private sawContent = false;
  private prologChars = 0;
  private replacedChars = 0;
  private fedChars = 0;
  /** `fedChars` when the last batch was delivered. */
  private flushedAt = 0;
  private readonly emitAttempt = (attempt: JunitAttempt): void => this.emit(attempt);

  constructor(private readonly options: JunitParserOptions) {
    this.limits = { ...DEFAULT_JUNIT_LIMITS, ...options.limits };
    this.batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE));
    this.writer = options.writer;
    this.problems = createProblemList(this.limits.maxWarnings);
    this.walker = new DocumentWalker({
      limits: this.limits,
      problems: this.problems,
      position: () => this.position(),
      onCase: (testCase) => this.emitCase(testCase),
      keepSlices: options.keepSlices === true,
    });
    this.xml = new XmlScanner(this.xmlHandler(), { maxTextChars: this.limits.maxTextChars });
  }

  get rejected(): boolean {
    return this.failed;
  }

  write(chunk: string | Uint8Array): void {
    if (this.summary !== null) throw new Error('JunitParser.write() called after close()');
    if (this.failed) return;
    if (typeof chunk === 'string') this.guard(() => this.feed(chunk));
    else {
      const pieces = this.pieces;
      try {
        const controls = this.bytes.decode(chunk, pieces);
        this.guard(() => this.feedPieces(pieces, controls));
      } finally {
        pieces.length = 0;
      }
    }
    if (
      this.options.keepSlices === true &&
      this.fedChars - this.flushedAt >= SLICE_SPAN_CHARS &&
      !this.failed
    )
      this.flush();
  }

  close(): JunitFileSummary {
    if (this.summary !== null) return this.summary;
    this.guard(() => this.finish());
    if (!this.failed) this.flush();
    if (this.replacedChars > 0) {
      this.problems.warn(`${this.replacedChars} control characters (e.g. ANSI escapes) replaced with U+FFFD`);
    }
    this.summary = { ok: !this.failed, counts: { ...this.counts }, problems: this.problems.list() };
    return this.summary;
  }

  private xmlHandler(): XmlScannerHandler {
    const walker = this.walker;
    return {
      openTag: (name, attributes, _selfClosing, span) => walker.openTag(name, attributes, span),
      closeTag: () => walker.closeTag(),
      wantsText: () => walker.wantsText(),
      text: (text) => walker.text(text),
      doctype: () => {
        throw new JunitFileError(
          'DOCTYPE/DTD declarations are not allowed in JUnit reports (entities are never expanded)',
          this.position(),
        );
      },
      textTooLong: (length) => {
        const message = `a text node is ${length} characters long (limit ${this.limits.maxTextChars})`;
        throw new JunitFileError(message, this.position());
      },
    };
  }

  /** Runs `step`; a JunitFileError marks the file as rejected, anything else is a bug and propagates. */
  private guard(step: () => void): void {
    if (this.failed) return;
    try {
      step();
    } catch (error) {
      const fileError =
        error instanceof XmlSyntaxError
          ? new JunitFileError(`malformed XML: ${error.message}`, { line: error.line, column: error.column })
          : error;
      if (!(fileError instanceof JunitFileError)) throw error;
      this.failed = true;
      this.batch = [];
      this.pending = 0;
      this.problems.error(fileError.message, fileError.position);
    }
  }

  private feed(text: string): void {
    if (text === '') return;
    this.scan(text, true);
    if (!this.walker.rootSeen) this.checkProlog(text.length);
  }

  /**
   * The text of one chunk of bytes, in pieces (see decode.ts): as `feed` of the pieces joined.
   * `controls`: whether they may hold control characters (if not, none is looked for).
   */
  private feedPieces(pieces: string[], controls: boolean): void {
    let length = 0;
    for (const text of pieces) {
      if (text === '') continue;
      length += text.length;
      this.scan(text, controls);
    }
    if (length > 0 && !this.walker.rootSeen) this.checkProlog(length);
  }

  private scan(text: string, controls: boolean): void {
    if (!this.started) this.checkStart(text);
    if (!this.sawContent) this.sawContent = /\S/.test(text);
    let cleaned = text;
    if (controls) {
      const replaced = replaceControlChars(text);
      this.replacedChars += replaced.replaced;
      cleaned = replaced.text;
    }
    this.fedChars += cleaned.length;
    this.xml.write(cleaned);
  }

  private checkStart(text: string): void {
    this.started = true;
    if (text.charCodeAt(0) === 0x1f) {
      throw new JunitFileError('the file looks gzip-compressed; decompress it before parsing', null);
    }
  }

  private checkProlog(length: number): void {
    this.prologChars += length;
    if (this.prologChars > this.limits.maxPrologChars) {
      const message = `no root element within the first ${this.limits.maxPrologChars} characters`;
      throw new JunitFileError(message, this.position());
    }
  }

  private finish(): void {
    this.feed(this.bytes.flush());
    if (!this.sawContent) throw new JunitFileError('the file is empty', null);
    if (!this.walker.rootSeen) {
      throw new JunitFileError('no root element: expected <testsuites> or <testsuite>', this.position());
    }
    this.xml.close();
  }

  private emitCase(testCase: OpenCase): void {
    this.counts.testcases++;
    forEachAttempt(testCase, this.emitAttempt, this.options.keepSlices === true);
  }

  private emit(attempt: JunitAttempt): void {
    if (this.counts.attempts >= this.limits.maxAttempts) {
      const message =
        this.options.attemptsLimitMessage ??
        `the file has more than ${this.limits.maxAttempts} test attempts`;
      throw new JunitFileError(message, this.position());
    }
    attempt.retryIndex = this.retries.next(attempt);
    this.count(attempt);
    if (this.writer !== undefined) {
      this.writer.add(attempt);
      if (++this.pending >= this.batchSize) this.flush();
      return;
    }
    this.batch.push(attempt);
    if (this.batch.length >= this.batchSize) this.flush();
  }

  private count(attempt: JunitAttempt): void {
    this.counts.attempts++;
    if (attempt.outcome === 'failed') this.counts.failures++;
    if (attempt.outcome === 'skipped') this.counts.skipped++;
    if (attempt.retryIndex > 0) this.counts.retries++;
  }

  private flush(): void {
    this.flushedAt = this.fedChars;
    if (this.writer !== undefined) {
      if (this.pending === 0) return;
      this.pending = 0;
      this.writer.flush();
      return;
    }
    if (this.batch.length === 0) return;
    const batch = this.batch;
    this.batch = [];
    this.options.onAttempts(batch);
  }

  private position(): Position {
    return this.xml.position();
  }
}
