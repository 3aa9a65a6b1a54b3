import type { AppContext } from '../app/context.ts';
import { processGitHubEvent } from '../app/github/events.ts';
import { WriterCache } from '../app/github/writers.ts';
import type { Forge } from '../app/ports.ts';
import {
  markDeliveryFailed,
  markDeliveryProcessed,
  pendingDeliveries,
  pruneDeliveries,
} from '../store/github.ts';
import { type Background, runPeriodically } from './periodic.ts';

/** A delivery failing this many times is set aside (its outcome keeps the last error). */
const MAX_ATTEMPTS = 5;
const BATCH = 100;
/** Processed deliveries are kept this long (GitHub redelivers within a few days). */
const KEEP_MS = 14 * 24 * 3_600_000;

type Log = { warn(o: object, m: string): void; error(o: object, m: string): void };

/**
 * Processes stored GitHub deliveries in the order they arrived. Every effect is idempotent (queue
 * events, status upserts), so a replica repeating a delivery another one is processing does no harm.
 */
export class GitHubEventProcessor {
  readonly #ctx: AppContext;
  readonly #forge: Forge;
  readonly #log: Log;
  /** Who was found to have write access lately (commands from PR comments). */
  readonly #writers = new WriterCache();
  #running: Promise<number> | undefined;
  #again = false;

  constructor(ctx: AppContext, forge: Forge, log: Log) {
    this.#ctx = ctx;
    this.#forge = forge;
    this.#log = log;
  }

  /** Processes what is pending; a call while a pass runs makes that pass go round once more. */
  runOnce(): Promise<number> {
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #drain(): Promise<number> {
    let done = 0;
    do {
      this.#again = false;
      const rows = await pendingDeliveries(this.#ctx.db, BATCH);
      for (const row of rows) {
        try {
          const outcome = await processGitHubEvent(
            this.#ctx,
            this.#forge,
            row.event,
            JSON.parse(row.payload),
            this.#writers,
          );
          await markDeliveryProcessed(this.#ctx.db, row.id, outcome, this.#ctx.now());
          done++;
        } catch (err) {
          const message = String((err as Error).message);
          const attempts = await markDeliveryFailed(this.#ctx.db, row.id, `error: ${message}`);
          if (attempts >= MAX_ATTEMPTS) {
            await markDeliveryProcessed(this.#ctx.db, row.id, `gave up: ${message}`, this.#ctx.now());
            this.#log.error({ err, delivery: row.id, event: row.event }, 'GitHub delivery failed for good');
          } else {
            this.#log.warn({ err, delivery: row.id, event: row.event }, 'GitHub delivery failed; will retry');
            // Keep order: a later event of the same PR must not overtake this one.
            return done;
          }
        }
      }
      if (rows.length === BATCH) this.#again = true;
    } while (this.#again);
    await pruneDeliveries(this.#ctx.db, this.#ctx.now() - KEEP_MS);
    return done;
  }
}

/** Runs passes every `intervalMs` until stopped (deliveries also wake it as they arrive). */
export function startGitHubEvents(
  processor: GitHubEventProcessor,
  intervalMs: number,
  log: Log,
): Background & { wake(): void } {
  const onError = (err: unknown) => log.error({ err }, 'GitHub delivery pass failed');
  const loop = runPeriodically(() => processor.runOnce(), intervalMs, onError);
  return {
    // runOnce itself coalesces: a wake during a pass makes that pass go round once more.
    wake: () => {
      processor.runOnce().catch(onError);
    },
    stop: async () => {
      await loop.stop();
      await processor.runOnce().catch(onError);
    },
  };
}
