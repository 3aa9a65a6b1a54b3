/**
 * Byte chunks pushed by a thread's message handler and read by a consumer on the same thread as an
 * async iterable. `release` gives the sender credit for another chunk: when the consumer takes a chunk
 * (`'taken'`), or only when it asks for the next one, the previous one being done with (`'done'`).
 */
export class ChunkQueue implements AsyncIterable<Uint8Array> {
  readonly #chunks: Uint8Array[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  constructor(
    private readonly release: () => void,
    private readonly when: 'taken' | 'done',
  ) {}

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
        if (this.when === 'taken') this.release();
        yield chunk;
        if (this.when === 'done') this.release();
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
