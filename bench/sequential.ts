// Runs the one-at-a-time loop (seq-client.mjs) in a child process and returns its latencies.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './common.ts';

export interface SequentialRequest {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string | undefined;
}

/**
 * n requests one at a time (`requests` in turn) after a warm-up of min(50, n/5), within budgetMs:
 * latencies in milliseconds, in the order measured, and the non-2xx answers.
 */
export function runSequential(
  requests: readonly SequentialRequest[],
  n: number,
  budgetMs: number,
): Promise<{ times: number[]; failed: number }> {
  const job = JSON.stringify({ requests, n, warmup: Math.min(50, Math.ceil(n / 5)), budgetMs });
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
