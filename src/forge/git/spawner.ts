// Starts git processes from a thread of their own (spawn-thread.mjs) rather than the request thread.
// Node starts a child by forking the process, and the fork copies the server's page tables while the
// starting thread waits: 2-5 ms per git process for a server of a few hundred MB, more when the
// machine is busy. The merge queue's runner starts dozens in a row when a target branch moves (a
// merge base for each queued PR), and every read that arrived meanwhile waited behind them. If the
// thread cannot start or stops, git runs from this thread as before.
import { execFile } from 'node:child_process';
import { Worker } from 'node:worker_threads';

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
  options: SpawnOptions & { encoding: 'utf8' };
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
      const request: Request = { id, file, args, options: { ...options, encoding: 'utf8' }, input };
      this.#worker.postMessage(request);
    });
  }
}

let thread: SpawnThread | undefined;
let threadUnavailable = false;

function inProcess(
  file: string,
  args: string[],
  options: SpawnOptions,
  input: string,
): Promise<SpawnOutcome> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { ...options, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' && !error.killed ? error.code : null) : 0;
      resolve({ stdout, stderr, code });
    });
    child.stdin?.on('error', () => {}); // git may exit before reading all input
    child.stdin?.end(input);
  });
}

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
  if (threadUnavailable) return inProcess(file, args, options, input);
  if (thread === undefined || thread.stopped) {
    try {
      thread = new SpawnThread();
    } catch {
      threadUnavailable = true;
      return inProcess(file, args, options, input);
    }
  }
  return thread.run(file, args, options, input);
}
