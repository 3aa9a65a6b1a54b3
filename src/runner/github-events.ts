import type { AppContext } from '../app/context.ts';
import { GitHubDeliveries } from '../app/github/process-events.ts';
import type { Forge } from '../app/ports.ts';
import { type Background, runPeriodically } from './periodic.ts';

type Log = { warn(o: object, m: string): void; error(o: object, m: string): void };

/**
 * Drains the stored GitHub deliveries (app/github/process-events.ts) batch by batch, one drain at a
 * time: a call while one runs makes that drain go round once more.
 */
export class GitHubEventProcessor {
  readonly #deliveries: GitHubDeliveries;
  #running: Promise<number> | undefined;
  #again = false;

  constructor(ctx: AppContext, forge: Forge, log: Log) {
    this.#deliveries = new GitHubDeliveries(ctx, forge, log);
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
      const batch = await this.#deliveries.processBatch();
      done += batch.done;
      // A delivery to retry holds back the rest until the next pass.
      if (batch.blocked) return done;
      if (batch.full) this.#again = true;
    } while (this.#again);
    await this.#deliveries.prune();
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
