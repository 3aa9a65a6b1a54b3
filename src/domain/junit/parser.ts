// Streaming JUnit XML parser: text or byte chunks in, batches of attempt records out.
//
// Contract: attempts handed to `onAttempts` are provisional until `close()` returns `ok: true`.
// If `ok` is false the file was rejected (malformed XML, DTD, limits, bad root, empty file):
// the caller must discard every attempt it received from this parser. After the first error no
// further batches are delivered and later writes are ignored.
import { SaxesParser } from 'saxes';
import type { OpenCase } from './case.ts';
import { forEachAttempt } from './case.ts';
import { createByteDecoder } from './decode.ts';
import { DocumentWalker } from './document.ts';
import type { Position, ProblemList } from './problems.ts';
import { createProblemList, JunitFileError } from './problems.ts';
import { createRetryCounter } from './retry-counter.ts';
import type {
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
const SAXES_POSITION_PREFIX = /^(\d+):(\d+): /;

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
  private readonly sax = new SaxesParser({ xmlns: false });
  private readonly walker: DocumentWalker;
  private batch: JunitAttempt[] = [];
  private failed = false;
  private summary: JunitFileSummary | null = null;
  private started = false;
  private sawContent = false;
  private prologChars = 0;
  private replacedChars = 0;
  /** saxes' input position at the last tag event (see DocumentWalker.openTag's `span`). */
  private lastTagPosition = 0;
  /** The text passed to saxes by the current `sax.write`, and its offset in the whole input. */
  private chunkText = '';
  private chunkStart = 0;
  private fedChars = 0;
  /** `fedChars` when the last batch was delivered. */
  private flushedAt = 0;
  /** Whether saxes currently has a text handler (see `decideText`). */
  private textOn = true;
  private readonly textHandler = (text: string): void => this.onText(text);
  private readonly emitAttempt = (attempt: JunitAttempt): void => this.emit(attempt);

  constructor(private readonly options: JunitParserOptions) {
    this.limits = { ...DEFAULT_JUNIT_LIMITS, ...options.limits };
    this.batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE));
    this.problems = createProblemList(this.limits.maxWarnings);
    this.walker = new DocumentWalker({
      limits: this.limits,
      problems: this.problems,
      position: () => this.position(),
      onCase: (testCase) => this.emitCase(testCase),
      keepSlices: options.keepSlices === true,
    });
    this.listen();
  }

  write(chunk: string | Uint8Array): void {
    if (this.summary !== null) throw new Error('JunitParser.write() called after close()');
    if (this.failed) return;
    const text = typeof chunk === 'string' ? chunk : this.bytes.decode(chunk);
    this.guard(() => this.feed(text));
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

  private listen(): void {
    const sax = this.sax;
    const walker = this.walker;
    sax.on('opentag', (tag) => {
      const position = sax.position;
      const span = position - this.lastTagPosition;
      this.lastTagPosition = position;
      walker.openTag(tag.name, tag.attributes, span);
      // A self-closing tag's closetag event follows at once, at the same position, and decides.
      if (!tag.isSelfClosing) this.decideText(position);
    });
    sax.on('closetag', () => {
      const position = sax.position;
      this.lastTagPosition = position;
      walker.closeTag();
      this.decideText(position);
    });
    sax.on('text', this.textHandler);
    sax.on('cdata', (text) => this.onText(text));
    sax.on('doctype', () => {
      throw new JunitFileError(
        'DOCTYPE/DTD declarations are not allowed in JUnit reports (entities are never expanded)',
        this.position(),
      );
    });
    sax.on('error', (error) => {
      throw fromSaxesError(error, this.position());
    });
  }

  /**
   * Called at each tag event (`position`: just after the tag), where a text node starts. Without a
   * text handler saxes does not build text strings at all, which is most of the cost of the
   * whitespace between elements and of <system-out>. The handler is needed when the walker keeps
   * the text (inside a result element), and for the text-length limit. A text node ends at the next
   * "<", and its decoded text is never longer than its raw characters; so when that "<" is in the
   * current chunk within the limit and opens a tag (the next event is then a tag event again), the
   * node can neither fail the limit nor be kept, and the handler can be off until that tag. When
   * the node may run into the next chunk, or a comment, processing instruction or CDATA section
   * follows (after which another text node starts, with no event to decide on), it stays on.
   *
   * (Handlers for comments and processing instructions would give more decision points, but each
   * handler is a property added to the saxes object, and a few more turn it into a slow
   * dictionary-mode object.)
   */
  private decideText(position: number): void {
    let on = true;
    if (!this.walker.wantsText()) {
      const text = this.chunkText;
      const from = position - this.chunkStart;
      if (from >= 0) {
        const end = text.indexOf('<', from);
        if (end !== -1 && end - from <= this.limits.maxTextChars && end + 1 < text.length) {
          const next = text.charCodeAt(end + 1);
          on = next === 0x21 /* ! */ || next === 0x3f /* ? */;
        }
      }
    }
    if (on === this.textOn) return;
    this.textOn = on;
    if (on) this.sax.on('text', this.textHandler);
    else this.sax.off('text');
  }

  /** Runs `step`; a JunitFileError marks the file as rejected, anything else is a bug and propagates. */
  private guard(step: () => void): void {
    if (this.failed) return;
    try {
      step();
    } catch (error) {
      if (!(error instanceof JunitFileError)) throw error;
      this.failed = true;
      this.batch = [];
      this.problems.error(error.message, error.position);
    }
  }

  private feed(text: string): void {
    if (text === '') return;
    if (!this.started) this.checkStart(text);
    if (!this.sawContent) this.sawContent = /\S/.test(text);
    const cleaned = replaceControlChars(text);
    this.replacedChars += cleaned.replaced;
    this.chunkText = cleaned.text;
    this.chunkStart = this.fedChars;
    this.fedChars += cleaned.text.length;
    this.sax.write(cleaned.text);
    if (!this.walker.rootSeen) this.checkProlog(text.length);
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
    this.sax.close();
  }

  private onText(text: string): void {
    if (text.length > this.limits.maxTextChars) {
      const message = `a text node is ${text.length} characters long (limit ${this.limits.maxTextChars})`;
      throw new JunitFileError(message, this.position());
    }
    this.walker.text(text);
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
    if (this.batch.length === 0) return;
    const batch = this.batch;
    this.batch = [];
    this.options.onAttempts(batch);
  }

  private position(): Position {
    return { line: this.sax.line, column: Math.max(1, this.sax.column) };
  }
}

/** saxes prefixes messages with "line:column: "; keep the position as fields instead. */
function fromSaxesError(error: Error, fallback: Position): JunitFileError {
  const match = SAXES_POSITION_PREFIX.exec(error.message);
  if (match === null) return new JunitFileError(`malformed XML: ${error.message}`, fallback);
  const position = { line: Number(match[1]), column: Math.max(1, Number(match[2])) };
  return new JunitFileError(`malformed XML: ${error.message.slice(match[0].length)}`, position);
}
