// JUnit parsing off the request thread. A 100k-case report takes about a second of CPU to parse;
// on the request thread that second blocks every other request (and the database writer). Parser
// threads parse while the request thread serves others, stores earlier uploads, or reads the next
// file; the request thread forwards bytes (a bounded number of chunks in flight, so a fast client
// never queues a whole file in memory), and decodes the batches of attempts that come back
// (parsed-codec.ts) and derives their test ids and failure facts while the thread parses on.
import { Worker } from 'node:worker_threads';
import type { JunitAttempt } from '../../domain/junit/index.ts';
import { deriveFile, deriveInto, type FailureFacts, type IdentityContext, parseAndDerive } from './derive.ts';
import type { AttemptBudget, FileRead, ParsedFile } from './parse-file.ts';
import { decodeAttempts, type EncodedAttempts } from './parsed-codec.ts';
import type { FilePrep, UploadPrep } from './prepare.ts';

/** Messages to a parser thread. */
export type ToParser =
  /** A new file: its chunks follow, then `end`. */
  | {
      kind: 'open';
      id: number;
      name: string;
      maxBytes: number;
      budget: AttemptBudget | undefined;
    }
  /** The next bytes of file `id`. */
  | { kind: 'chunk'; id: number; bytes: Uint8Array }
  /** File `id` has no more bytes. */
  | { kind: 'end'; id: number };

/** Messages from a parser thread. */
export type FromParser =
  /** One chunk of file `id` was parsed: another may be sent. */
  | { kind: 'consumed'; id: number }
  /** The next attempts of file `id`, as parsed (they count only if its summary is ok). */
  | { kind: 'attempts'; id: number; batch: EncodedAttempts }
  /** File `id` is parsed (or rejected, as parseJunitFile rejects: a summary with one error). */
  | {
      kind: 'parsed';
      id: number;
      name: string;
      summary: ParsedFile['summary'];
      read: FileRead | undefined;
    }
  /** Parsing file `id` threw (a bug): the request fails. */
  | { kind: 'failed'; id: number; message: string };

/**
 * Parses one file and derives its attempts' failure facts and, when `identity` is given, their test
 * ids (derive.ts); what upload and bundle ingestion call. `budget`: the attempts the file's upload
 * may still hold (parse-file.ts `UploadAttempts`). With `prep` (made for `identity`), the attempts
 * are also prepared for ingestion as they come (prepare.ts), and the file is attached to it.
 */
export type ParseJunit = (
  name: string,
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
  identity?: IdentityContext,
  budget?: AttemptBudget,
  prep?: UploadPrep,
) => Promise<ParsedFile>;

/**
 * Chunks of one file in flight to its thread: 32 x 256 KB at most. The request thread forwards them
 * between its own tasks (deriving a batch of attempts takes ~25 ms, storing another upload longer):
 * with 2 MB in flight the thread waited for bytes ~15% of a 100k-case parse, with 8 MB ~2%.
 */
const MAX_IN_FLIGHT = 32;
const MAX_CHUNK = 256 * 1024;

/** How a file's parse ended: the file (and its preparation, if any), or an error. */
type Parsed = { file: ParsedFile; prep?: FilePrep | undefined } | { error: Error };

interface Pending {
  readonly done: (result: Parsed) => void;
  /** The attempts received so far, and what the request thread derived of them. */
  readonly attempts: JunitAttempt[];
  readonly derived: { failures: (FailureFacts | null)[]; testIds: string[] };
  readonly identity: IdentityContext | undefined;
  /** Prepares the attempts for ingestion as they are derived (with an identity only). */
  readonly prep: FilePrep | undefined;
  inFlight: number;
  /** Wakes the sender waiting for a chunk to be consumed. */
  wake: (() => void) | undefined;
}

/**
 * The parser thread's young generation (V8's nursery). A parse allocates a few short-lived objects
 * per tag (attributes, strings, attempt records) and drops each batch once encoded; with V8's
 * default (~16 MB semi-spaces) it was collected so often that garbage collection took ~25% of the
 * thread and more again on V8's helper threads. At 96 MB (A/B of six 100k-case uploads against the
 * default: parser thread 0.88 vs 0.99 CPU-s, V8 helpers 0.43 vs 0.62, whole upload 1.71 vs 1.88 s)
 * almost nothing survives a collection. The request thread's own young generation made no
 * measurable difference. Memory: up to this much more resident while a large file is parsed.
 */
const PARSER_YOUNG_GENERATION_MB = 96;

class ParserThread {
  readonly pending = new Map<number, Pending>();
  readonly worker: Worker;

  constructor(
    onExit: () => void,
    private readonly onRead: (read: FileRead | undefined) => void,
  ) {
    this.worker = new Worker(new URL('./parse-worker-entry.mjs', import.meta.url), {
      resourceLimits: { maxYoungGenerationSizeMb: PARSER_YOUNG_GENERATION_MB },
    });
    this.worker.unref();
    this.worker.on('message', (m: FromParser) => this.#receive(m));
    const fail = (error: Error) => {
      for (const p of this.pending.values()) p.done({ error });
      this.pending.clear();
      onExit();
    };
    this.worker.on('error', (error) => fail(new Error(`the JUnit parser thread failed: ${error.message}`)));
    this.worker.on('exit', (code) => fail(new Error(`the JUnit parser thread stopped (exit code ${code})`)));
  }

  #receive(m: FromParser): void {
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    if (m.kind === 'consumed') {
      p.inFlight--;
      p.wake?.();
      return;
    }
    if (m.kind === 'attempts') {
      const attempts = decodeAttempts(m.batch);
      for (const a of attempts) p.attempts.push(a);
      const from = p.derived.failures.length;
      deriveInto(p.derived, attempts, p.identity);
      p.prep?.add(attempts, p.derived.testIds, p.derived.failures, from);
      return;
    }
    this.#forget(m.id);
    if (m.kind === 'failed') {
      p.done({ error: new Error(m.message) });
      return;
    }
    this.onRead(m.read);
    const read = m.read === undefined ? {} : { read: m.read };
    // A rejected file ingests nothing (its provisional batches are dropped here).
    if (!m.summary.ok) {
      p.done({
        file: { ...deriveFile({ name: m.name, summary: m.summary, attempts: [] }, p.identity), ...read },
      });
      return;
    }
    const { failures, testIds } = p.derived;
    const identity = p.identity;
    const file: ParsedFile = {
      name: m.name,
      summary: m.summary,
      attempts: p.attempts,
      failures,
      ...(identity === undefined ? {} : { ids: { identity, testIds } }),
      ...read,
    };
    p.done({ file, prep: p.prep });
  }

  #forget(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  async parse(
    id: number,
    name: string,
    source: AsyncIterable<Uint8Array>,
    maxBytes: number,
    identity: IdentityContext | undefined,
    budget: AttemptBudget | undefined,
    prep: UploadPrep | undefined,
  ): Promise<ParsedFile> {
    let settled: Parsed | undefined;
    const result = new Promise<Parsed>((resolve) => {
      const pending: Pending = {
        attempts: [],
        derived: { failures: [], testIds: [] },
        identity,
        prep: identity === undefined ? undefined : prep?.file(),
        inFlight: 0,
        wake: undefined,
        done: (r) => {
          settled = r;
          pending.wake?.();
          resolve(r);
        },
      };
      this.pending.set(id, pending);
    });
    const pending = this.pending.get(id) as Pending;
    // Kept alive while it has work: an idle thread never holds the process open.
    this.worker.ref();
    const post = (m: ToParser, transfer: ArrayBuffer[] = []) => this.worker.postMessage(m, transfer);
    post({ kind: 'open', id, name, maxBytes, budget });
    try {
      for await (const chunk of source) {
        for (let at = 0; at < chunk.length && settled === undefined; at += MAX_CHUNK) {
          while (pending.inFlight >= MAX_IN_FLIGHT && settled === undefined)
            await new Promise<void>((resolve) => {
              pending.wake = resolve;
            });
          if (settled !== undefined) break;
          pending.inFlight++;
          // A copy of its own, moved to the thread: a view would clone its whole underlying buffer.
          const bytes = new Uint8Array(chunk.subarray(at, at + MAX_CHUNK));
          post({ kind: 'chunk', id, bytes }, [bytes.buffer as ArrayBuffer]);
        }
        // A file the parser already gave up on (too large, malformed) is not read any further.
        if (settled !== undefined) break;
      }
    } catch (error) {
      // The source broke (the client went away): the thread finishes this file and nobody waits.
      this.#forget(id);
      post({ kind: 'end', id });
      throw error;
    }
    if (settled === undefined) post({ kind: 'end', id });
    const r = await result;
    if ('error' in r) throw r.error;
    if (r.prep !== undefined) prep?.attach(r.file, r.prep);
    return r.file;
  }
}

/**
 * Parser threads, started on first use. With `threads` 0 files are parsed on the calling thread.
 * A thread that dies fails the files it held (their requests answer 500) and is replaced on the
 * next file.
 */
export class ParserPool {
  readonly #threads: (ParserThread | undefined)[];
  #next = 0;
  #ids = 0;
  #plainBytes = 0;
  readonly #onRead = (read: FileRead | undefined): void => {
    this.#plainBytes += read?.plainBytes ?? 0;
  };

  constructor(threads: number) {
    this.#threads = new Array(threads).fill(undefined);
  }

  readonly parse: ParseJunit = async (name, source, maxBytes, identity, budget, prep) => {
    if (this.#threads.length === 0) {
      const file = await parseAndDerive(name, source, maxBytes, identity, budget);
      this.#onRead(file.read);
      if (identity !== undefined && prep !== undefined) prep.attach(file, prep.prepareWhole(file));
      return file;
    }
    return this.#thread().parse(++this.#ids, name, source, maxBytes, identity, budget, prep);
  };

  /**
   * Bytes of JUnit files handed to the parser so far, after decompression: the parsing work done
   * (`mainline_ingest_parsed_bytes_total`). A file stops being inflated once the parser rejects it.
   */
  get plainBytes(): number {
    return this.#plainBytes;
  }

  /** Parser threads running now (started on first use, replaced after a failure). */
  get running(): number {
    return this.#threads.filter((t) => t !== undefined).length;
  }

  /**
   * An idle running thread if there is one; else a new thread while there is room (a thread costs
   * its start-up, ~1 s of CPU, and memory, so one is started only when the others are busy); else
   * the running thread with the fewest files in progress (round robin among equals).
   */
  #thread(): ParserThread {
    const n = this.#threads.length;
    let best = -1;
    let free = -1;
    for (let k = 0; k < n; k++) {
      const i = (this.#next + k) % n;
      const thread = this.#threads[i];
      if (thread === undefined) {
        if (free === -1) free = i;
        continue;
      }
      if (best === -1 || thread.pending.size < (this.#threads[best]?.pending.size ?? 0)) best = i;
    }
    if (free !== -1 && (best === -1 || (this.#threads[best]?.pending.size ?? 0) > 0)) best = free;
    this.#next = (best + 1) % n;
    let thread = this.#threads[best];
    if (thread === undefined) {
      const started: ParserThread = new ParserThread(() => {
        if (this.#threads[best] === started) this.#threads[best] = undefined;
      }, this.#onRead);
      thread = started;
      this.#threads[best] = thread;
    }
    return thread;
  }

  async close(): Promise<void> {
    const threads = this.#threads.filter((t) => t !== undefined);
    this.#threads.fill(undefined);
    await Promise.all(
      threads.map((t) => {
        t.worker.ref();
        return t.worker.terminate();
      }),
    );
  }
}
