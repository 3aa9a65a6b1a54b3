// A bundle decoding thread (decode-pool.ts): zstd and the tar walk of a bundle PUT run here, not on
// the request thread, which only forwards the compressed bytes and takes the JUnit entries' bytes on
// to the JUnit parser. Output is flow-controlled through shared memory: when the request thread has
// not taken enough of it, this thread blocks (Atomics.wait) inside the decoder's callback, so a
// bundle that inflates to hundreds of MiB is never queued in memory.
import { parentPort, threadId } from 'node:worker_threads';
import { ChunkQueue } from '../../lib/chunk-queue.ts';
import { AttemptEncoder, transferList } from '../ingest/parsing/codec.ts';
import type { BundleSink } from './collect.ts';
import type { FromDecoder, ToDecoder } from './decode-protocol.ts';
import { CONTROL_ABORTED, CONTROL_TAKEN, MAX_DATA_IN_FLIGHT } from './decode-protocol.ts';
import { decodeBundle } from './extract.ts';
import { type BundleLimits, fail, OK, type Verdict } from './types.ts';

const port = parentPort;
if (port === null) throw new Error('decode-worker.ts runs as a worker thread');

const post = (m: FromDecoder, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

/** The compressed chunks of one job; each taken by the decoder lets the request thread send another. */
class Input extends ChunkQueue {
  constructor(readonly job: number) {
    super(() => post({ kind: 'consumed', job }), 'taken');
  }
}

let current: Input | undefined;

const ABORTED = fail('corrupt', 'decoding was stopped by the server');

function sinkFor(job: number, control: Int32Array): BundleSink {
  let sent = 0;
  /** Waits until the request thread has taken enough data; false once the job is aborted. */
  const credit = (): boolean => {
    for (;;) {
      if (Atomics.load(control, CONTROL_ABORTED) !== 0) return false;
      const taken = Atomics.load(control, CONTROL_TAKEN);
      if (sent - taken < MAX_DATA_IN_FLIGHT) return true;
      Atomics.wait(control, CONTROL_TAKEN, taken);
    }
  };
  return {
    meta: (meta) => post({ kind: 'meta', job, meta }),
    codeowners: (text) => post({ kind: 'codeowners', job, text }),
    fileStart(name): Verdict {
      if (Atomics.load(control, CONTROL_ABORTED) !== 0) return ABORTED;
      post({ kind: 'file', job, name });
      return OK;
    },
    fileData(bytes): Verdict {
      if (bytes.length === 0) return OK;
      if (!credit()) return ABORTED;
      // The decoder reuses its buffers: a copy (not Buffer#slice, a view) is moved to the request thread.
      const copy = new Uint8Array(bytes);
      sent++;
      post({ kind: 'data', job, bytes: copy }, [copy.buffer as ArrayBuffer]);
      return OK;
    },
    fileEnd(): Verdict {
      post({ kind: 'fileEnd', job });
      return OK;
    },
    internalStart(name): Verdict {
      if (Atomics.load(control, CONTROL_ABORTED) !== 0) return ABORTED;
      post({ kind: 'internal', job, name });
      return OK;
    },
    internalAttempts(attempts): Verdict {
      if (attempts.length === 0) return OK;
      if (!credit()) return ABORTED;
      // Copied out in the compact form parser threads use (ingest/parsing/codec.ts), and moved across.
      const encoder = new AttemptEncoder();
      for (const attempt of attempts) encoder.add(attempt);
      const batch = encoder.take();
      sent++;
      post({ kind: 'attempts', job, batch }, transferList(batch));
      return OK;
    },
    internalEnd(summary): Verdict {
      post({ kind: 'internalEnd', job, summary });
      return OK;
    },
  };
}

async function run(job: number, limits: Partial<BundleLimits>, control: Int32Array, input: Input) {
  const counter = { bytes: 0 };
  try {
    const outcome = await decodeBundle(input, limits, sinkFor(job, control), counter);
    // rawMeta is for debugging only; it is not sent across.
    const sent = outcome.ok
      ? {
          ok: true as const,
          format: outcome.format,
          meta: outcome.meta,
          files: outcome.files,
          ...(outcome.internal === undefined ? {} : { internal: outcome.internal }),
          problems: outcome.problems,
        }
      : outcome;
    post({ kind: 'done', job, outcome: sent, decodedBytes: counter.bytes, threadId });
  } catch (error) {
    post({
      kind: 'failed',
      job,
      message: error instanceof Error ? error.message : String(error),
      decodedBytes: counter.bytes,
      threadId,
    });
  } finally {
    if (current === input) current = undefined;
  }
}

port.on('message', (m: ToDecoder) => {
  if (m.kind === 'start') {
    current?.end();
    current = new Input(m.job);
    void run(m.job, m.limits, new Int32Array(m.control), current);
    return;
  }
  if (current === undefined || current.job !== m.job) return;
  if (m.kind === 'input') current.push(m.bytes);
  else current.end();
});
