// The parser thread: JUnit files arrive as chunks of bytes and leave as batches of encoded attempts
// while they are parsed, then the file's summary. Several files may be in progress at once (one per
// upload part being read); each has its own parser.
import { parentPort } from 'node:worker_threads';
import type { AttemptWriter } from '../../../domain/junit/index.ts';
import { ChunkQueue } from '../../../lib/chunk-queue.ts';
import { AttemptEncoder, transferList } from './codec.ts';
import { parseJunitFile } from './parse-file.ts';
import type { FromParser, ToParser } from './protocol.ts';

/**
 * Attempts per batch sent to the request thread. It derives each batch's test ids and failure facts
 * while this thread parses on, and this thread never holds a whole file's attempts (less to collect).
 * Each attempt is encoded (its strings copied) as soon as the parser has it (an AttemptWriter: no
 * attempt objects or batch arrays pile up for the garbage collector), so the parser keeps slices
 * of its input in the attempts instead of copying every name and failure text; it
 * ends a batch at least every SLICE_SPAN_CHARS of input, which bounds the slices the encoder holds
 * (strings with characters above U+00FF, kept until the batch is sent).
 */
const BATCH = 8192;

const port = parentPort;
if (port === null) throw new Error('parsing/worker.ts runs as a worker thread only');
const send = (message: FromParser, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
const files = new Map<number, ChunkQueue>();

port.on('message', (message: ToParser) => {
  if (message.kind === 'open') {
    const { id } = message;
    // A chunk asked past is parsed: the sender may send another.
    const queue = new ChunkQueue(() => send({ kind: 'consumed', id }), 'done');
    files.set(id, queue);
    const encoder = new AttemptEncoder();
    const sendBatch: AttemptWriter = {
      add: (attempt) => encoder.add(attempt),
      flush: () => {
        const batch = encoder.take();
        send({ kind: 'attempts', id, batch }, transferList(batch));
      },
    };
    // Batches are provisional: a file rejected later is discarded by the request thread as a whole.
    parseJunitFile({
      name: message.name,
      source: queue,
      maxBytes: message.maxBytes,
      budget: message.budget,
      sink: sendBatch,
      stream: { batchSize: BATCH, keepSlices: true },
    })
      .then((parsed) =>
        send({ kind: 'parsed', id, name: parsed.name, summary: parsed.summary, read: parsed.read }),
      )
      .catch((error: unknown) => send({ kind: 'failed', id, message: String(error) }))
      .finally(() => files.delete(id));
  } else if (message.kind === 'chunk') files.get(message.id)?.push(message.bytes);
  else files.get(message.id)?.end();
});
