import {
  markDeliveryFailed,
  markDeliveryProcessed,
  pendingDeliveries,
  pruneDeliveries,
} from '../../store/forge/github.ts';
import type { AppContext } from '../context.ts';
import type { Forge } from '../ports.ts';
import { processGitHubEvent } from './events.ts';

/** A delivery failing this many times is set aside (its outcome keeps the last error). */
const MAX_ATTEMPTS = 5;
/** Deliveries read per batch. */
export const DELIVERY_BATCH = 100;
/** Processed deliveries are kept this long (GitHub redelivers within a few days). */
const KEEP_MS = 14 * 24 * 3_600_000;

type Log = { warn(o: object, m: string): void; error(o: object, m: string): void };

/** What one batch did: how many deliveries it processed, and why it stopped. */
export interface DeliveryBatch {
  readonly done: number;
  /** A delivery failed and will be retried: nothing after it may run before it (order per PR). */
  readonly blocked: boolean;
  /** The batch was full: more may be pending. */
  readonly full: boolean;
}

/**
 * Stored GitHub deliveries, processed in the order they arrived. Every effect is idempotent (queue
 * events, status upserts), so a replica repeating a delivery another one is processing does no harm.
 */
export class GitHubDeliveries {
  readonly #ctx: AppContext;
  readonly #forge: Forge;
  readonly #log: Log;

  constructor(ctx: AppContext, forge: Forge, log: Log) {
    this.#ctx = ctx;
    this.#forge = forge;
    this.#log = log;
  }

  /** Processes up to one batch of pending deliveries, oldest first. */
  async processBatch(): Promise<DeliveryBatch> {
    const ctx = this.#ctx;
    let done = 0;
    const rows = await pendingDeliveries(ctx.db, DELIVERY_BATCH);
    for (const row of rows) {
      try {
        const outcome = await processGitHubEvent(ctx, this.#forge, row.event, JSON.parse(row.payload));
        await markDeliveryProcessed(ctx.db, row.id, outcome, ctx.now());
        done++;
      } catch (err) {
        const message = String((err as Error).message);
        const attempts = await markDeliveryFailed(ctx.db, row.id, `error: ${message}`);
        if (attempts >= MAX_ATTEMPTS) {
          await markDeliveryProcessed(ctx.db, row.id, `gave up: ${message}`, ctx.now());
          this.#log.error({ err, delivery: row.id, event: row.event }, 'GitHub delivery failed for good');
        } else {
          this.#log.warn({ err, delivery: row.id, event: row.event }, 'GitHub delivery failed; will retry');
          // Keep order: a later event of the same PR must not overtake this one.
          return { done, blocked: true, full: false };
        }
      }
    }
    return { done, blocked: false, full: rows.length === DELIVERY_BATCH };
  }

  /** Forgets processed deliveries past their keeping time. */
  prune(): Promise<void> {
    return pruneDeliveries(this.#ctx.db, this.#ctx.now() - KEEP_MS);
  }
}
