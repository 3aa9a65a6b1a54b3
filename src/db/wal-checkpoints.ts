// Checkpoints of an SQLite WAL off the request thread. SQLite's automatic checkpoint runs inside the
// commit that crosses 1,000 WAL pages: a large upload's commit then also copies its pages into the
// database file, most of the commit's time, on the thread that serves requests.
// Here the writer's automatic checkpoints are off and a thread of its own checkpoints (PASSIVE) at
// most every CHECKPOINT_EVERY_MS after writes. If that thread fails, the writer checkpoints itself
// again, so the WAL never grows without bound.
import { Worker } from 'node:worker_threads';

const CHECKPOINT_EVERY_MS = 200;

export class WalCheckpoints {
  readonly #worker: Worker;
  #timer: NodeJS.Timeout | undefined;
  #failed = false;
  readonly #exited: Promise<unknown>;

  /** `fallBack` turns the writer's own automatic checkpoints on again. */
  constructor(
    file: string,
    private readonly fallBack: () => void,
  ) {
    this.#worker = new Worker(new URL('./wal-checkpoint-thread.mjs', import.meta.url), {
      workerData: { file },
    });
    this.#worker.unref();
    this.#exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    const fail = () => {
      if (this.#failed) return;
      this.#failed = true;
      this.fallBack();
    };
    this.#worker.on('message', (m: { kind: string }) => {
      if (m.kind === 'failed') fail();
    });
    this.#worker.on('error', fail);
    this.#worker.on('exit', fail);
  }

  /** Something was committed: checkpoint soon (writes in a burst share one checkpoint). */
  written(): void {
    if (this.#failed || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#worker.postMessage('checkpoint');
    }, CHECKPOINT_EVERY_MS);
    this.#timer.unref();
  }

  /** Stops the thread (the writer's close then checkpoints what is left). */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#failed = true;
    // Held open until it has exited: an unreferenced thread would let the process end mid-close.
    this.#worker.ref();
    this.#worker.postMessage('close');
    await this.#exited;
  }
}
