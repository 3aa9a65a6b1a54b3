// Bundle decoding off the request thread. zstd and the tar walk of a bundle that inflates to hundreds
// of MiB took seconds of CPU on the request thread (health checks waited over a second behind five
// such PUTs). Here a thread of its own decodes each bundle: the request thread forwards compressed
// chunks (a few in flight) and takes back meta.json, CODEOWNERS and the JUnit entries' bytes, which
// the bundle thread sends only as fast as the request thread takes them (decode-protocol.ts).
import { Worker } from 'node:worker_threads';
import type { JunitFileSummary } from '../../domain/junit/index.ts';
import type { EncodedAttempts } from '../ingest/parsing/codec.ts';
import type { SelectedFile } from './collect.ts';
import {
  CONTROL_ABORTED,
  CONTROL_TAKEN,
  type FromDecoder,
  type SentOutcome,
  type ToDecoder,
} from './decode-protocol.ts';
import { type BundleSource, openSource } from './source.ts';
import type { BundleLimits, BundleUploadMeta } from './types.ts';

export type { SelectedFile, SentOutcome };

/** What a decoding yields, in the order the bundle holds it. */
export type BundleEvent =
  | { readonly kind: 'meta'; readonly meta: BundleUploadMeta }
  | { readonly kind: 'codeowners'; readonly text: string }
  /** A JUnit candidate starts: its bytes follow as `data` events, then `fileEnd`. */
  | { readonly kind: 'file'; readonly name: string }
  | { readonly kind: 'data'; readonly bytes: Uint8Array }
  | { readonly kind: 'fileEnd' }
  /** internal.bin starts: its attempts follow as `attempts` events, then `internalEnd`. */
  | { readonly kind: 'internal'; readonly name: string }
  | { readonly kind: 'attempts'; readonly batch: EncodedAttempts }
  | { readonly kind: 'internalEnd'; readonly summary: JunitFileSummary }
  /** The last event: the bundle was read (files selected) or refused. */
  | { readonly kind: 'done'; readonly outcome: SentOutcome };

export interface BundleDecoding {
  /** The next event; throws if the source broke (the client went away) or the thread failed. */
  next(): Promise<BundleEvent>;
  /** Stops decoding (nothing more is read from the source); safe to call at any time. */
  abort(): void;
}

/** What the decoders did since the app started: for /metrics-style checks and tests. */
export interface BundleDecodeStats {
  /** Decodings started. */
  decodes: number;
  /** Decompressed bytes produced (tar headers and padding included). */
  decodedBytes: number;
  /** threadId of the thread that ran the last finished decoding. */
  lastThreadId: number | undefined;
  /** Most decoded bytes ever waiting on the request thread to be taken (bounded by the flow control). */
  maxQueuedBytes: number;
}

/** Compressed bytes in flight to a thread: 4 chunks of ≤ 256 KiB. */
const MAX_INPUT_IN_FLIGHT = 4;
const MAX_INPUT_CHUNK = 256 * 1024;

class Job implements BundleDecoding {
  readonly #events: BundleEvent[] = [];
  #wake: (() => void) | undefined;
  #error: Error | undefined;
  #aborted = false;
  #done = false;
  #inputInFlight = 0;
  #inputWake: (() => void) | undefined;
  #queuedBytes = 0;
  readonly #control = new Int32Array(new SharedArrayBuffer(8));

  constructor(
    readonly id: number,
    readonly thread: DecoderThread,
    private readonly stats: BundleDecodeStats,
  ) {}

  get control(): SharedArrayBuffer {
    return this.#control.buffer as SharedArrayBuffer;
  }

  receive(m: FromDecoder): void {
    if (m.kind === 'consumed') {
      this.#inputInFlight--;
      this.#inputWake?.();
      return;
    }
    if (m.kind === 'done' || m.kind === 'failed') {
      this.#done = true;
      this.#inputWake?.();
      if (m.kind === 'failed') this.fail(new Error(`decoding the bundle failed: ${m.message}`));
    }
    if (this.#aborted) return;
    if (m.kind === 'meta') this.#push({ kind: 'meta', meta: m.meta });
    else if (m.kind === 'codeowners') this.#push({ kind: 'codeowners', text: m.text });
    else if (m.kind === 'file') this.#push({ kind: 'file', name: m.name });
    else if (m.kind === 'data') this.#push({ kind: 'data', bytes: m.bytes });
    else if (m.kind === 'fileEnd') this.#push({ kind: 'fileEnd' });
    else if (m.kind === 'internal') this.#push({ kind: 'internal', name: m.name });
    else if (m.kind === 'attempts') this.#push({ kind: 'attempts', batch: m.batch });
    else if (m.kind === 'internalEnd') this.#push({ kind: 'internalEnd', summary: m.summary });
    else if (m.kind === 'done') this.#push({ kind: 'done', outcome: m.outcome });
  }

  fail(error: Error): void {
    this.#error ??= error;
    this.#done = true;
    this.#wake?.();
    this.#inputWake?.();
  }

  #push(event: BundleEvent): void {
    if (event.kind === 'data') {
      this.#queuedBytes += event.bytes.length;
      this.stats.maxQueuedBytes = Math.max(this.stats.maxQueuedBytes, this.#queuedBytes);
    }
    this.#events.push(event);
    this.#wake?.();
  }

  async next(): Promise<BundleEvent> {
    for (;;) {
      const event = this.#events.shift();
      if (event !== undefined) {
        if (event.kind === 'data' || event.kind === 'attempts') {
          if (event.kind === 'data') this.#queuedBytes -= event.bytes.length;
          // Taken: the thread may decode on (it waits when too much is untaken).
          Atomics.add(this.#control, CONTROL_TAKEN, 1);
          Atomics.notify(this.#control, CONTROL_TAKEN);
        }
        return event;
      }
      if (this.#error !== undefined) throw this.#error;
      if (this.#aborted) throw new Error('the bundle decoding was stopped');
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#events.length = 0;
    this.#queuedBytes = 0;
    // The flag first, then a change of the counter the thread may be waiting on, so it wakes.
    Atomics.store(this.#control, CONTROL_ABORTED, 1);
    Atomics.add(this.#control, CONTROL_TAKEN, 1);
    Atomics.notify(this.#control, CONTROL_TAKEN);
    this.thread.post({ kind: 'end', job: this.id });
    this.#wake?.();
    this.#inputWake?.();
  }

  /** Forwards the source to the thread, a few chunks in flight; then tells it the input ended. */
  async pump(source: BundleSource): Promise<void> {
    const iterator = openSource(source);
    try {
      for (;;) {
        if (this.#aborted || this.#done) return;
        const next = await iterator.next();
        if (next.done) break;
        const chunk = next.value as Uint8Array;
        for (let at = 0; at < chunk.length; at += MAX_INPUT_CHUNK) {
          while (this.#inputInFlight >= MAX_INPUT_IN_FLIGHT && !this.#aborted && !this.#done)
            await new Promise<void>((resolve) => {
              this.#inputWake = resolve;
            });
          if (this.#aborted || this.#done) return;
          this.#inputInFlight++;
          // A copy of its own, moved to the thread: a view would clone its whole underlying buffer.
          const bytes = new Uint8Array(chunk.subarray(at, at + MAX_INPUT_CHUNK));
          this.thread.post({ kind: 'input', job: this.id, bytes }, [bytes.buffer as ArrayBuffer]);
        }
      }
      this.thread.post({ kind: 'end', job: this.id });
    } catch (error) {
      // The source broke (the client went away): rethrown to whoever reads the events.
      this.fail(error instanceof Error ? error : new Error(String(error)));
      this.abort();
    } finally {
      await iterator.return?.();
    }
  }
}

class DecoderThread {
  readonly worker: Worker;
  job: Job | undefined;

  constructor(
    private readonly stats: BundleDecodeStats,
    private readonly onFree: (thread: DecoderThread) => void,
    onExit: (thread: DecoderThread) => void,
  ) {
    this.worker = new Worker(new URL('./decode-worker-entry.mjs', import.meta.url));
    this.worker.unref();
    this.worker.on('message', (m: FromDecoder) => this.#receive(m));
    const fail = (error: Error) => {
      this.job?.fail(error);
      this.job = undefined;
      onExit(this);
    };
    this.worker.on('error', (error) =>
      fail(new Error(`the bundle decoding thread failed: ${error.message}`)),
    );
    this.worker.on('exit', (code) =>
      fail(new Error(`the bundle decoding thread stopped (exit code ${code})`)),
    );
  }

  post(m: ToDecoder, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(m, transfer);
  }

  start(job: Job, limits: Partial<BundleLimits>): void {
    this.job = job;
    this.stats.decodes++;
    // Kept alive while it has work: an idle thread never holds the process open.
    this.worker.ref();
    this.post({ kind: 'start', job: job.id, limits, control: job.control });
  }

  #receive(m: FromDecoder): void {
    const job = this.job;
    if (job === undefined || job.id !== m.job) return;
    job.receive(m);
    if (m.kind === 'done' || m.kind === 'failed') {
      this.stats.decodedBytes += m.decodedBytes;
      this.stats.lastThreadId = m.threadId;
      this.job = undefined;
      this.worker.unref();
      this.onFree(this);
    }
  }
}

/**
 * Bundle decoding threads, started on first use and kept (at most `keep` idle) for the next bundle:
 * a thread's start-up compiles its modules. Bundle PUTs decode inside an ingest turn, so `keep` =
 * MAINLINE_INGEST_CONCURRENCY threads are enough; a decoding beyond them gets a thread that ends after it.
 */
export class BundleDecoders {
  readonly stats: BundleDecodeStats = {
    decodes: 0,
    decodedBytes: 0,
    lastThreadId: undefined,
    maxQueuedBytes: 0,
  };
  readonly #idle: DecoderThread[] = [];
  readonly #all = new Set<DecoderThread>();
  #ids = 0;
  #closed = false;

  constructor(private readonly keep: number) {}

  /** Starts decoding `source` on a thread; the caller reads the events and aborts if it stops early. */
  decode(source: BundleSource, limits: Partial<BundleLimits>): BundleDecoding {
    if (this.#closed) throw new Error('the bundle decoders are closed');
    const thread = this.#idle.pop() ?? this.#start();
    const job = new Job(++this.#ids, thread, this.stats);
    thread.start(job, limits);
    void job.pump(source);
    return job;
  }

  #start(): DecoderThread {
    const thread = new DecoderThread(
      this.stats,
      (t) => {
        if (!this.#closed && this.#idle.length < this.keep) this.#idle.push(t);
        else this.#stop(t);
      },
      (t) => {
        this.#all.delete(t);
        const at = this.#idle.indexOf(t);
        if (at !== -1) this.#idle.splice(at, 1);
      },
    );
    this.#all.add(thread);
    return thread;
  }

  #stop(thread: DecoderThread): Promise<number> {
    this.#all.delete(thread);
    thread.worker.ref();
    return thread.worker.terminate();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#idle.length = 0;
    await Promise.all([...this.#all].map((t) => this.#stop(t)));
  }
}
