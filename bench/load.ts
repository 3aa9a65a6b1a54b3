// Drives one endpoint: a sequential loop (one request at a time, performance.now(), sub-ms
// percentiles) and an autocannon run (throughput and whole-ms latency percentiles under load).
import http from 'node:http';
import autocannon from 'autocannon';
import { quantile } from './common.ts';

export interface Scenario {
  readonly name: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  /** Request bodies, used in turn (one body: the same request every time). */
  readonly bodies: readonly string[];
}

export interface LoadResult {
  readonly name: string;
  /** autocannon: mean requests per second over the run. */
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly total: number;
  /** Errors, timeouts and non-2xx answers of the autocannon run plus the sequential loop. */
  readonly failed: number;
  /** Sequential loop, milliseconds. */
  readonly seq: { readonly p50: number; readonly p99: number; readonly max: number; readonly n: number };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One POST; resolves with the status code once the whole body has arrived. */
export function post(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function sequential(
  base: string,
  s: Scenario,
  n: number,
): Promise<{ times: number[]; failed: number }> {
  const times: number[] = [];
  let failed = 0;
  const warmup = Math.min(50, Math.ceil(n / 5));
  for (let i = 0; i < n + warmup; i++) {
    const body = s.bodies[i % s.bodies.length] ?? '';
    const t0 = performance.now();
    const { status } = await post(base + s.path, s.headers, body);
    const elapsed = performance.now() - t0;
    if (status < 200 || status > 299) failed++;
    if (i >= warmup) times.push(elapsed);
  }
  return { times, failed };
}

export async function measure(
  base: string,
  s: Scenario,
  options: { duration: number; connections: number; sequential: number },
): Promise<LoadResult> {
  const seq = await sequential(base, s, options.sequential);
  const sorted = seq.times.sort((a, b) => a - b);
  let turn = 0;
  const result = await autocannon({
    url: base + s.path,
    method: 'POST',
    headers: { ...s.headers },
    connections: options.connections,
    duration: options.duration,
    timeout: 30,
    requests:
      s.bodies.length === 1
        ? [{ body: s.bodies[0] ?? '' }]
        : [
            {
              setupRequest: (request) => {
                turn = (turn + 1) % s.bodies.length;
                return { ...request, body: s.bodies[turn] ?? '' };
              },
            },
          ],
  });
  return {
    name: s.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    failed: result.errors + result.timeouts + result.non2xx + seq.failed,
    seq: {
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      max: sorted.at(-1) ?? Number.NaN,
      n: sorted.length,
    },
  };
}
