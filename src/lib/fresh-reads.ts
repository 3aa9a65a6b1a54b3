// Concurrent reads of one key share a read, but only one not yet started when they asked: a read
// started before a caller arrived may have taken its snapshot before something the caller already
// saw committed, so sharing it could answer older than the caller's own knowledge. At most one read
// per key runs; callers arriving while it runs wait and all share the next one, started once it
// settles (so after every one of them arrived). A key is forgotten as soon as its reads settle.

interface Queued<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (reason: unknown) => void;
  /** The first joiner's read: every caller of a key reads the same thing. */
  readonly read: () => Promise<T>;
}

interface Slot<T> {
  /** The read to start when the running one settles, shared by everyone who asked since it started. */
  queued: Queued<T> | undefined;
}

export class FreshReads<T> {
  readonly #slots = new Map<string, Slot<T>>();

  /** Keys with a read running (for tests: settled keys are forgotten). */
  get size(): number {
    return this.#slots.size;
  }

  /**
   * The value of `read()` for `key`, from a read started after this call: its own if none is running,
   * else the one started next, shared with every caller that asked meanwhile. Its error reaches them all.
   */
  run(key: string, read: () => Promise<T>): Promise<T> {
    const slot = this.#slots.get(key);
    if (slot === undefined) return this.#start(key, read);
    if (slot.queued === undefined) {
      let resolve!: (value: T) => void;
      let reject!: (reason: unknown) => void;
      const promise = new Promise<T>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      slot.queued = { promise, resolve, reject, read };
    }
    return slot.queued.promise;
  }

  #start(key: string, read: () => Promise<T>): Promise<T> {
    const slot: Slot<T> = { queued: undefined };
    this.#slots.set(key, slot);
    let running: Promise<T>;
    try {
      running = read();
    } catch (error) {
      running = Promise.reject(error);
    }
    const settled = (): void => {
      const queued = slot.queued;
      if (queued === undefined) {
        this.#slots.delete(key);
        return;
      }
      this.#start(key, queued.read).then(queued.resolve, queued.reject);
    };
    running.then(settled, settled);
    return running;
  }
}
