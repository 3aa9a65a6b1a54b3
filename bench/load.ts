// Drives one endpoint: a sequential loop (one request at a time, performance.now(), sub-ms
// percentiles, in a child process of its own: sequential.ts), an autocannon run (throughput and whole-ms latency percentiles under load, in the
// bench process) and, where installed, a wrk run (throughput and µs latency percentiles under load,
// in a process of its own).
import http from 'node:http';
import autocannon, { type RequestSpec } from 'autocannon';
import { quantile } from './common.ts';
import { runSequential, type SequentialFigures, type SequentialRequest } from './sequential.ts';
import { runWrk, type WrkResult } from './wrk.ts';

export interface Scenario {
  readonly name: string;
  readonly path: string;
  /** POST (the API) unless given. */
  readonly method?: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  /** Request bodies, used in turn (one body: the same request every time; none for a GET). */
  readonly bodies: readonly string[];
}

export interface LoadResult {
  readonly name: string;
  /** autocannon: mean requests per second over the run. */
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly total: number;
  /** Errors, timeouts and non-2xx answers of the autocannon run plus the sequential loop (wrk's: wrk.failed). */
  readonly failed: number;
  /** Sequential loop, milliseconds. */
  readonly seq: SequentialFigures;
  /** wrk's run, when wrk is installed and turned on. */
  readonly wrk?: WrkResult | undefined;
  /** The same requests against a bare route serving this read's captured bytes (bench/same-bytes.ts). */
  readonly same?: LoadResult | undefined;
  /** Mean size of the answers, in bytes (where they were captured). */
  readonly bytes?: number | undefined;
}

export interface LoadOptions {
  readonly duration: number;
  readonly connections: number;
  readonly sequential: number;
  /** The wrk binary, or undefined for autocannon only. */
  readonly wrk?: string | undefined;
  readonly wrkThreads?: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request; resolves with the status code once the whole body has arrived. */
export function send(
  url: string,
  method: 'GET' | 'POST',
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sized =
      body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request(url, { method, agent, headers: sized }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One POST; resolves with the status code once the whole body has arrived. */
export function post(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return send(url, 'POST', headers, body);
}

/** The scenario's i-th request (its body in turn). */
export function sendScenario(
  base: string,
  s: Scenario,
  i: number,
): Promise<{ status: number; text: string }> {
  const method = s.method ?? 'POST';
  return send(
    base + s.path,
    method,
    s.headers,
    method === 'GET' ? undefined : (s.bodies[i % s.bodies.length] ?? ''),
  );
}

/** The scenario's requests for the one-at-a-time loop (its bodies in turn). */
function sequentialRequests(base: string, s: Scenario): SequentialRequest[] {
  const method = s.method ?? 'POST';
  if (method === 'GET' || s.bodies.length === 0) return [{ url: base + s.path, method, headers: s.headers }];
  return s.bodies.map((body) => ({ url: base + s.path, method, headers: s.headers, body }));
}

/** autocannon's request list for a scenario: one fixed request, or bodies in turn. */
export function autocannonRequests(s: Scenario): RequestSpec[] {
  if ((s.method ?? 'POST') === 'GET' || s.bodies.length <= 1) return [{ body: s.bodies[0] ?? '' }];
  let turn = 0;
  return [
    {
      setupRequest: (request) => {
        turn = (turn + 1) % s.bodies.length;
        return { ...request, body: s.bodies[turn] ?? '' };
      },
    },
  ];
}

export async function measure(base: string, s: Scenario, options: LoadOptions): Promise<LoadResult> {
  const { seq, failed } = await runSequential(
    s.name,
    sequentialRequests(base, s),
    options.sequential,
    options.duration,
  );
  const method = s.method ?? 'POST';
  const result = await autocannon({
    url: base + s.path,
    method,
    headers: { ...s.headers },
    connections: options.connections,
    duration: options.duration,
    timeout: 30,
    ...(method === 'GET' ? {} : { requests: autocannonRequests(s) }),
  });
  const wrk =
    options.wrk === undefined
      ? undefined
      : await runWrk(
          options.wrk,
          { url: base + s.path, method, headers: s.headers, bodies: method === 'GET' ? [] : s.bodies },
          { duration: options.duration, connections: options.connections, threads: options.wrkThreads ?? 1 },
        );
  return {
    name: s.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    failed: result.errors + result.timeouts + result.non2xx + failed,
    seq,
    wrk,
  };
}

/** One answer of a running load: when it completed (performance.now()), its latency and status. */
export interface Sample {
  readonly end: number;
  readonly ms: number;
  readonly status: number;
}

export interface RunningLoad {
  /** Every answer so far. */
  readonly samples: Sample[];
  /** Stops the load; resolves once autocannon has closed its connections. */
  stop(): Promise<void>;
}

/**
 * An open-ended autocannon load over several scenarios (each connection cycles through them), with
 * every answer recorded, so a window of it can be cut out afterwards (windowStats). overallRate
 * caps the requests per second over all connections.
 */
export function startLoad(
  base: string,
  scenarios: readonly Scenario[],
  options: { connections: number; overallRate?: number | undefined },
): RunningLoad {
  const requests = scenarios.map((s): RequestSpec => {
    const method = s.method ?? 'POST';
    const head: RequestSpec = { method, path: s.path, headers: { ...s.headers } };
    return method === 'GET' ? head : { ...head, ...autocannonRequests(s)[0] };
  });
  const samples: Sample[] = [];
  const instance = autocannon({
    url: base,
    connections: options.connections,
    duration: 7 * 24 * 3600,
    timeout: 60,
    requests,
    ...(options.overallRate !== undefined && options.overallRate > 0
      ? { overallRate: options.overallRate }
      : {}),
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    samples.push({ end: performance.now(), ms: responseTime, status: statusCode });
  });
  return {
    samples,
    stop: async () => {
      instance.stop();
      await instance;
    },
  };
}

export interface WindowStats {
  /** Answers to requests sent in the window. */
  readonly n: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Non-2xx answers. */
  readonly failed: number;
}

/** Latency figures of the requests sent in [from, to) (performance.now() times). */
export function windowStats(samples: readonly Sample[], from: number, to: number): WindowStats {
  const inside = samples.filter((s) => s.end - s.ms >= from && s.end - s.ms < to);
  const sorted = inside.map((s) => s.ms).sort((a, b) => a - b);
  return {
    n: inside.length,
    rps: inside.length / ((to - from) / 1000),
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
    failed: inside.filter((s) => s.status < 200 || s.status > 299).length,
  };
}
