import { randomUUID } from 'node:crypto';
import type { AppContext } from '../app/context.ts';
import type { Forge } from '../app/ports.ts';
import { QueueExecutor } from '../app/queue/executor.ts';
import {
  pendingQueueActions,
  queuesToDrive,
  releaseQueueLease,
  takeQueueLease,
} from '../app/queue/leases.ts';
import { type Background, runPeriodically } from './periodic.ts';

/** A runner holds a queue this long after its last pass; a crashed runner's queues are taken over after it. */
export const LEASE_MS = 30_000;
const ACTIONS_PER_PASS = 50;
/** How often a queue's target and PR heads are compared with the forge (git has no webhooks). */
export const OBSERVE_EVERY_MS = 5_000;

type Log = {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
};

/**
 * Drives merge queues: for each queue with work it takes the queue's lease (so one runner at a time
 * drives it, across replicas), has it compared with the forge now and then, wakes timers, and has
 * the outbox actions carried out (app/queue/executor.ts), renewing the lease as it goes.
 */
export class QueueRunner {
  /** This runner's lease owner id; a restarted single server passes its stable id to resume at once. */
  readonly owner: string;
  readonly #ctx: AppContext;
  readonly #forge: Forge;
  readonly #log: Log;
  readonly #executor: QueueExecutor;
  readonly #held = new Set<string>();
  /** When each queue was last compared with the forge. */
  readonly #observedAt = new Map<string, number>();

  constructor(ctx: AppContext, forge: Forge, log: Log, options: { owner?: string } = {}) {
    this.owner = options.owner ?? randomUUID();
    this.#ctx = ctx;
    this.#forge = forge;
    this.#log = log;
    this.#executor = new QueueExecutor(ctx, forge);
  }

  /** One pass over every queue that has work or might have outside changes. */
  async runOnce(): Promise<void> {
    const now = this.#ctx.now();
    for (const queueId of await queuesToDrive(this.#ctx, now)) {
      if (!(await takeQueueLease(this.#ctx, queueId, this.owner, now, now + LEASE_MS))) continue;
      this.#held.add(queueId);
      await this.drive(queueId).catch((err: unknown) =>
        this.#log.error({ err, queue: queueId }, 'queue pass failed'),
      );
    }
  }

  /** Gives up every lease (on shutdown), so another replica takes over at once. */
  async releaseAll(): Promise<void> {
    for (const id of this.#held) await releaseQueueLease(this.#ctx, id, this.owner);
    this.#held.clear();
  }

  async drive(queueId: string): Promise<void> {
    const queue = await this.#executor.load(queueId);
    if (queue === undefined) return;
    const now = this.#ctx.now();
    const every = this.#forge.pollIntervalMs?.(queue.repo) ?? OBSERVE_EVERY_MS;
    if (now - (this.#observedAt.get(queueId) ?? Number.NEGATIVE_INFINITY) >= every) {
      this.#observedAt.set(queueId, now);
      await this.#executor.observe(queue);
    }
    await this.#executor.tickIfDue(queueId);
    let renewedAt = this.#ctx.now();
    for (const action of await pendingQueueActions(this.#ctx, queueId, ACTIONS_PER_PASS)) {
      // A long pass renews its lease as it goes (a pass may outlast LEASE_MS), and stops if another
      // runner took the queue meanwhile: one runner at a time drives a queue.
      const at = this.#ctx.now();
      if (at - renewedAt >= LEASE_MS / 3) {
        if (!(await takeQueueLease(this.#ctx, queueId, this.owner, at, at + LEASE_MS))) {
          this.#held.delete(queueId);
          this.#log.warn({ queue: queueId }, 'queue lease lost during a pass; stopping it');
          return;
        }
        renewedAt = at;
      }
      const outcome = await this.#executor.run(queueId, queue.repo, action);
      if (outcome.ok) continue;
      const where = { err: outcome.error, queue: queueId, action: action.id };
      if (outcome.gaveUp) this.#log.error(where, 'queue action failed for good');
      else this.#log.warn(where, 'queue action failed; it will be retried');
      // The next actions wait for this one: the outbox is carried out in order.
      return;
    }
  }
}

/** Runs passes every `intervalMs` (never two at once) until stopped; leases are released on stop. */
export function startQueueRunner(runner: QueueRunner, intervalMs: number, log: Log): Background {
  const loop = runPeriodically(
    () => runner.runOnce(),
    intervalMs,
    (err) => log.error({ err }, 'queue runner pass failed'),
  );
  return {
    stop: async () => {
      await loop.stop();
      await runner.releaseAll();
    },
  };
}
