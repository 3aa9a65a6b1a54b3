// How many uploads are ingested at once (MAINLINE_INGEST_CONCURRENCY). An upload holds its parsed
// attempts in memory from parsing to commit (about 270 MB for a 100k-test-case report), so twenty CI
// shards uploading large reports together would need gigabytes. Uploads past the limit wait, in
// arrival order, before their body is read: the client's bytes wait in the network buffers. The
// database stores one upload at a time anyway, so two at once (one parsing while the other is
// stored) already keep both stages busy; more only add memory.

export class IngestGate {
  #active = 0;
  readonly #queue: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`IngestGate: limit must be ≥ 1, got ${limit}`);
  }

  /** Uploads being ingested now. */
  get active(): number {
    return this.#active;
  }

  /** Uploads waiting for their turn. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Waits for a turn; the returned function ends it (calling it again does nothing). */
  async enter(): Promise<() => void> {
    if (this.#active < this.limit && this.#queue.length === 0) this.#active++;
    else await new Promise<void>((resolve) => this.#queue.push(resolve));
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.#queue.shift();
      // The turn passes straight to the next upload in line (active stays the same).
      if (next !== undefined) next();
      else this.#active--;
    };
  }

  /** Runs `work` in a turn. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const leave = await this.enter();
    try {
      return await work();
    } finally {
      leave();
    }
  }
}
