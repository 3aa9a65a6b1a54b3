// Starts git processes from a thread of their own (spawn-thread.mjs) rather than the request thread.
// Node starts a child by forking the process, and the fork copies the server's page tables while the
// starting thread waits, longer the larger the server and the busier the machine. The merge queue's runner starts dozens in a row when a target branch moves (a
// merge base for each queued PR), and every read that arrived meanwhile waited behind them. If the
// thread cannot start, git runs from this thread as before; if it stops, the calls it was running
// fail and the next call starts another.
import { Worker } from 'node:worker_threads';
import { runChild } from './run-child.mjs';

export interface SpawnOptions {
  env: NodeJS.ProcessEnv;
  timeout: number;
  killSignal: NodeJS.Signals;
  maxBuffer: number;
}

export interface SpawnOutcome {
  stdout: string;
  stderr: string;
  /** The exit code; null when the process was killed (timeout, too much output) or never started. */
  code: number | null;
}

interface Request {
  id: number;
  file: string;
  args: string[];
  options: SpawnOptions;
  input: string;
}

type Answer = SpawnOutcome & { id: number };

class SpawnThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, (outcome: SpawnOutcome | Error) => void>();
  #next = 0;
  stopped = false;

  constructor() {
    this.#worker = new Worker(new URL('./spawn-thread.mjs', import.meta.url));
    this.#worker.unref();
    this.#worker.on('message', (m: Answer) => {
      const done = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) this.#worker.unref();
      done?.({ stdout: m.stdout, stderr: m.stderr, code: m.code });
    });
    const fail = (error: Error) => {
      this.stopped = true;
      for (const done of this.#pending.values()) done(error);
      this.#pending.clear();
    };
    this.#worker.on('error', (error) => fail(new Error(`the git thread failed: ${error.message}`)));
    this.#worker.on('exit', (code) => fail(new Error(`the git thread stopped (exit code ${code})`)));
  }

  run(file: string, args: string[], options: SpawnOptions, input: string): Promise<SpawnOutcome> {
    return new Promise((resolve, reject) => {
      const id = this.#next++;
      this.#pending.set(id, (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome)));
      // Referenced while git runs, as a child process of this thread would be.
      if (this.#pending.size === 1) this.#worker.ref();
      const request: Request = { id, file, args, options, input };
      this.#worker.postMessage(request);
    });
  }
}

let thread: SpawnThread | undefined;
let threadUnavailable = false;

/**
 * Runs `file` with `args` (never a shell), writing `input` to its standard input; resolves with its
 * output and exit code once it has exited. Rejects only when the git thread stopped while it ran
 * (the process may or may not have run); the next call starts a new thread.
 */
export function runProcess(
  file: string,
  args: string[],
  options: SpawnOptions,
  input: string,
): Promise<SpawnOutcome> {
  if (threadUnavailable) return runChild(file, args, options, input);
  if (thread === undefined || thread.stopped) {
    try {
      thread = new SpawnThread();
    } catch {
      threadUnavailable = true;
      return runChild(file, args, options, input);
    }
  }
  return thread.run(file, args, options, input);
}
