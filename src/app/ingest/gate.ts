// Turns at the parser and the database for uploads (MAINLINE_INGEST_CONCURRENCY), shared fairly
// between organizations. A turn is taken only for work the server does on its own: parsing one file
// whose bytes have all arrived, or storing an upload. It is never held while a client's bytes are
// awaited (an upload's body is received whole before it asks for a turn), so a slow client cannot keep
// anyone else waiting; it only slows itself. The database stores one upload at a time anyway, so
// two turns (one parsing while the other stores) keep both stages busy; more only add memory.
//
// Fairness: when a turn ends and several organizations wait, the one holding the fewest turns gets
// it (the earliest waiter among equals), so an organization never holds more than its share while
// another waits for longer than one turn, however many uploads it sends. Turns are short (one file's
// parse), so the share is reached quickly; within an organization, uploads go in arrival order.

interface Waiter {
  readonly seq: number;
  readonly grant: () => void;
}

interface Tenant {
  held: number;
  readonly queue: Waiter[];
}

export class IngestGate {
  #active = 0;
  #waiting = 0;
  #seq = 0;
  readonly #tenants = new Map<string, Tenant>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`IngestGate: limit must be ≥ 1, got ${limit}`);
  }

  /** Turns held now. */
  get active(): number {
    return this.#active;
  }

  /** Turns being waited for. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Turns `tenant` holds now. */
  heldBy(tenant: string): number {
    return this.#tenants.get(tenant)?.held ?? 0;
  }

  #tenant(key: string): Tenant {
    let tenant = this.#tenants.get(key);
    if (tenant === undefined) {
      tenant = { held: 0, queue: [] };
      this.#tenants.set(key, tenant);
    }
    return tenant;
  }

  /**
   * Waits for a turn of `tenant` (an organization id); the returned function ends it (calling it
   * again does nothing).
   */
  async enter(tenant = ''): Promise<() => void> {
    const mine = this.#tenant(tenant);
    if (this.#active < this.limit && this.#waiting === 0) {
      this.#active++;
      mine.held++;
    } else {
      this.#waiting++;
      await new Promise<void>((grant) => mine.queue.push({ seq: this.#seq++, grant }));
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      mine.held--;
      this.#active--;
      if (mine.held === 0 && mine.queue.length === 0) this.#tenants.delete(tenant);
      this.#next();
    };
  }

  /** Gives a free turn to the waiting tenant holding the fewest (the earliest waiter among equals). */
  #next(): void {
    if (this.#active >= this.limit || this.#waiting === 0) return;
    let best: Tenant | undefined;
    for (const tenant of this.#tenants.values()) {
      const head = tenant.queue[0];
      if (head === undefined) continue;
      if (
        best === undefined ||
        tenant.held < best.held ||
        (tenant.held === best.held && head.seq < (best.queue[0] as Waiter).seq)
      )
        best = tenant;
    }
    const waiter = best?.queue.shift();
    if (best === undefined || waiter === undefined) return;
    this.#waiting--;
    this.#active++;
    best.held++;
    waiter.grant();
  }

  /** Runs `work` in a turn of `tenant`. */
  async run<T>(work: () => Promise<T>, tenant = ''): Promise<T> {
    const leave = await this.enter(tenant);
    try {
      return await work();
    } finally {
      leave();
    }
  }
}
