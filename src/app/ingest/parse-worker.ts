// The parser thread: JUnit files arrive as chunks of bytes, leave as encoded parsed files. Several
// files may be in progress at once (one per upload part being read); each has its own parser.
import { parentPort } from 'node:worker_threads';
import { parseAndDerive } from './derive.ts';
import { encodeParsedFile } from './parsed-codec.ts';
import type { FromParser, ToParser } from './parser-pool.ts';

/** The chunks of one file, handed to parseJunitFile as they arrive. */
class ChunkQueue implements AsyncIterable<Uint8Array> {
  readonly #chunks: Uint8Array[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  constructor(private readonly consumed: () => void) {}

  push(chunk: Uint8Array): void {
    this.#chunks.push(chunk);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    for (;;) {
      const chunk = this.#chunks.shift();
      if (chunk !== undefined) {
        yield chunk;
        // Asked for the next one: this one is parsed, the sender may send another.
        this.consumed();
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }
}

const port = parentPort;
if (port === null) throw new Error('parse-worker.ts runs as a worker thread only');
const send = (message: FromParser, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
const files = new Map<number, ChunkQueue>();

port.on('message', (message: ToParser) => {
  if (message.kind === 'open') {
    const { id } = message;
    const queue = new ChunkQueue(() => send({ kind: 'consumed', id }));
    files.set(id, queue);
    parseAndDerive(message.name, queue, message.maxBytes, message.identity, message.budget)
      .then((parsed) => {
        const file = encodeParsedFile(parsed);
        send({ kind: 'parsed', id, file }, [
          file.ints.buffer as ArrayBuffer,
          file.nums.buffer as ArrayBuffer,
        ]);
      })
      .catch((error: unknown) => send({ kind: 'failed', id, message: String(error) }))
      .finally(() => files.delete(id));
  } else if (message.kind === 'chunk') files.get(message.id)?.push(message.bytes);
  else files.get(message.id)?.end();
});
