// Runs the one-at-a-time loop (seq-client.mjs) in a child process, once the machine is at rest, and
// returns its latency figures.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { machineIdle, quantile, ROOT } from './common.ts';

export interface SequentialRequest {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string | undefined;
}

/** Latency figures of a one-at-a-time loop, milliseconds. */
export interface SequentialFigures {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly n: number;
}

/** Seconds a loop may take: three autocannon runs' worth, at least 10 (then it stops short of n). */
export function sequentialBudgetSeconds(duration: number): number {
  return Math.max(10, 3 * duration);
}

/**
 * n requests one at a time (`requests` in turn) after a warm-up of min(50, n/5), within
 * sequentialBudgetSeconds(duration), started once the machine is at rest (not in the aftermath of
 * the previous measurement's load): `what` names it in the log. Its figures and non-2xx answers.
 */
export async function runSequential(
  what: string,
  requests: readonly SequentialRequest[],
  n: number,
  duration: number,
): Promise<{ seq: SequentialFigures; failed: number }> {
  await machineIdle(`reads: ${what}`);
  const { times, failed } = await childLoop(requests, n, sequentialBudgetSeconds(duration) * 1000);
  return { seq: sequentialFigures(times), failed };
}

/** The figures of these latencies (milliseconds; sorted in place). */
export function sequentialFigures(times: number[]): SequentialFigures {
  const sorted = times.sort((a, b) => a - b);
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
    n: sorted.length,
  };
}

function childLoop(
  requests: readonly SequentialRequest[],
  n: number,
  budgetMs: number,
): Promise<{ times: number[]; failed: number }> {
  return sequentialLoop(requests, n, Math.min(50, Math.ceil(n / 5)), budgetMs);
}

/**
 * `warmup` then `n` requests one at a time from seq-client.mjs in a process of its own (it discards
 * the answer's bytes as they arrive), without waiting for the machine to rest: the latencies (ms,
 * unsorted) and the non-2xx count.
 */
export function sequentialLoop(
  requests: readonly SequentialRequest[],
  n: number,
  warmup: number,
  budgetMs: number,
): Promise<{ times: number[]; failed: number }> {
  const job = JSON.stringify({ requests, n, warmup, budgetMs });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'seq-client.mjs')], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`the sequential client exited with ${code}: ${err.slice(-2000)}`));
        return;
      }
      try {
        resolve(JSON.parse(out) as { times: number[]; failed: number });
      } catch (error) {
        reject(
          new Error(
            `the sequential client's answer is not JSON (${(error as Error).message}): ${out.slice(0, 300)}`,
          ),
        );
      }
    });
    child.stdin.end(job);
  });
}
