// JUnit parsing off the request thread: a large report's parse there would block every other request
// (and the database writer) for as long as it takes. Parser
// threads parse while the request thread serves others, stores earlier uploads, or reads the next
// file; the request thread forwards bytes (a bounded number of chunks in flight, so a fast client
// never queues a whole file in memory), and decodes the batches of attempts that come back
// (codec.ts) and derives their test ids and failure facts while the thread parses on.
import { Worker } from 'node:worker_threads';
import type { Derivation } from '../prepare/derive.ts';
import { IncomingFile } from '../prepare/incoming-file.ts';
import type { AttemptBudget, FileRead, IdentityContext, ParsedFile } from '../prepare/types.ts';
import type { UploadPrep } from '../prepare/upload-prep.ts';
import { decodeAttempts } from './codec.ts';
import { parseJunitFile } from './parse-file.ts';
import type { FromParser, ToParser } from './protocol.ts';

/** One file to parse. */
export interface ParseRequest {
  readonly name: string;
  readonly source: AsyncIterable<Uint8Array>;
  /** Bytes the file may hold after decompression. */
  readonly maxBytes: number;
  /** The identity the attempts' test ids are derived for (absent: their failure facts only). */
  readonly identity?: IdentityContext | undefined;
  /** The attempts the file's upload may still hold (parse-file.ts `UploadAttempts`). */
  readonly budget?: AttemptBudget | undefined;
  /** Made for `identity`: the attempts are also prepared as they come, and the file attached to it. */
  readonly prep?: UploadPrep | undefined;
}

/**
 * Parses one file and derives its attempts' failure facts and, when an identity is given, their
 * test ids (prepare/derive.ts); what upload and bundle ingestion call.
 */
export type ParseJunit = (request: ParseRequest) => Promise<ParsedFile>;

/** Parses and derives on the calling thread: what a parser thread and the request thread do together. */
export async function parseAndDerive(derivation: Derivation, request: ParseRequest): Promise<ParsedFile> {
  const { identity, prep } = request;
  const file = derivation.file(await parseJunitFile(request), identity);
  if (identity !== undefined && prep !== undefined) prep.attach(file, prep.prepareWhole(file));
  return file;
}

/**
 * Chunks of one file in flight to its thread. The request thread forwards them between its own tasks
 * (deriving a batch of attempts, storing another upload), so the thread needs enough queued to keep
 * parsing meanwhile (measured: docs/benchmarks.md).
 */
const MAX_IN_FLIGHT = 32;
const MAX_CHUNK = 256 * 1024;

/** How a file's parse ended: the file, or an error. */
type Parsed = { file: ParsedFile } | { error: Error };

interface Pending {
  readonly done: (result: Parsed) => void;
  /** The attempts received so far, derived (and prepared) as they come. */
  readonly incoming: IncomingFile;
  inFlight: number;
  /** Wakes the sender waiting for a chunk to be consumed. */
  wake: (() => void) | undefined;
}

/**
 * The parser thread's young generation (V8's nursery). A parse allocates a few short-lived objects
 * per tag (attributes, strings, attempt records) and drops each batch once encoded; with V8's
 * default it was collected so often that garbage collection took a large share of the thread
 * (docs/benchmarks.md); this large, almost nothing survives a collection. Memory: up to this much
 * more resident while a large file is parsed.
 */
const PARSER_YOUNG_GENERATION_MB = 96;

class ParserThread {
  readonly pending = new Map<number, Pending>();
  readonly worker: Worker;

  constructor(
    onExit: () => void,
    private readonly onRead: (read: FileRead | undefined) => void,
    private readonly derivation: Derivation,
  ) {
    this.worker = new Worker(new URL('./worker-entry.mjs', import.meta.url), {
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
      p.incoming.add(decodeAttempts(m.batch));
      return;
    }
    this.#forget(m.id);
    if (m.kind === 'failed') {
      p.done({ error: new Error(m.message) });
      return;
    }
    this.onRead(m.read);
    p.done({ file: p.incoming.finish(m.name, m.summary, m.read) });
  }

  #forget(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  async parse(id: number, request: ParseRequest): Promise<ParsedFile> {
    const { name, source, maxBytes, budget } = request;
    let settled: Parsed | undefined;
    const result = new Promise<Parsed>((resolve) => {
      const pending: Pending = {
        incoming: new IncomingFile(this.derivation, request.identity, request.prep),
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

  readonly #derivation: Derivation;

  /** `threads`: MAINLINE_PARSE_THREADS; `derivation`: the app's (app/caches.ts). */
  constructor(options: { threads: number; derivation: Derivation }) {
    this.#threads = new Array(options.threads).fill(undefined);
    this.#derivation = options.derivation;
  }

  readonly parse: ParseJunit = async (request) => {
    if (this.#threads.length === 0) {
      const file = await parseAndDerive(this.#derivation, request);
      this.#onRead(file.read);
      return file;
    }
    return this.#thread().parse(++this.#ids, request);
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
   * its start-up CPU and memory, so one is started only when the others are busy); else
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
      const started: ParserThread = new ParserThread(
        () => {
          if (this.#threads[best] === started) this.#threads[best] = undefined;
        },
        this.#onRead,
        this.#derivation,
      );
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
