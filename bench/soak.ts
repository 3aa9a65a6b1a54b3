// The soak: one server (fresh process on the scratch copy of the seeded database) under mixed load for
// BENCH_SOAK_SECONDS: the read endpoints in turn at BENCH_SOAK_RATE requests per second (autocannon),
// plus one small upload a second (a BENCH_SOAK_UPLOAD_CASES-case JUnit file, a new commit each time,
// to a repository of its own). Every BENCH_SOAK_SAMPLE_SECONDS the server's RSS (VmRSS of
// /proc/<pid>/status) and V8 heap (GET /metrics, prom-client's nodejs_heap_size_* gauges) are
// sampled. Growth is judged on the second half (the first half includes warm-up: caches, JIT, pools).
import { createHash } from 'node:crypto';
import { type Engine, log, type Params, quantile, sleep } from './common.ts';
import { ingestFile, upload } from './ingest.ts';
import { type Scenario, startLoad, type WindowStats, windowStats } from './load.ts';
import type { ChildServer } from './server.ts';

/** Growth over the second half under this fraction of the value at its start: "flat". */
export const FLAT_GROWTH = 0.05;

export interface MemorySample {
  /** Seconds since the start of the soak. */
  readonly t: number;
  /** Bytes. */
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
}

export interface Trend {
  readonly start: number;
  readonly end: number;
  readonly max: number;
  /** Least-squares slope over the second half, MB per minute. */
  readonly slopeMBPerMinute: number;
  /** Growth over the second half (slope × half length) as a fraction of the fitted value at its start. */
  readonly growthSecondHalf: number;
  readonly verdict: 'flat' | 'growing' | 'too short';
}

export interface SoakReport {
  readonly engine: Engine;
  readonly seconds: number;
  readonly sampleSeconds: number;
  readonly rate: number;
  readonly connections: number;
  readonly reads: WindowStats;
  readonly readNames: string[];
  readonly uploadCases: number;
  readonly uploads: {
    readonly n: number;
    readonly failed: number;
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
  };
  readonly samples: MemorySample[];
  readonly rss: Trend;
  /**
   * V8 heap used, as its floor: the lowest of the last FLOOR_SAMPLES samples at each point (heap used
   * saws up and down with garbage collection; its floor is what survives collections).
   */
  readonly heapFloor: Trend;
}

/** Samples of the heap floor's window (a minute at the default 10 s interval). */
export const FLOOR_SAMPLES = 6;

/** Reads a gauge of prom-client's text output (the sum over its label sets). */
export function gauge(text: string, name: string): number {
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) {
      sum += value;
      found = true;
    }
  }
  return found ? sum : Number.NaN;
}

async function sample(server: ChildServer, t: number): Promise<MemorySample> {
  const rss = server.memory().current;
  let heapUsed = Number.NaN;
  let heapTotal = Number.NaN;
  try {
    const res = await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    if (res.status === 200) {
      heapUsed = gauge(text, 'mainline_nodejs_heap_size_used_bytes');
      heapTotal = gauge(text, 'mainline_nodejs_heap_size_total_bytes');
    } else {
      log(`WARNING: soak: GET /metrics answered ${res.status}`);
    }
  } catch (error) {
    log(`WARNING: soak: GET /metrics failed: ${(error as Error).message}`);
  }
  return { t, rss, heapUsed, heapTotal };
}

/** Start, end, max and the second half's least-squares slope of one series. */
export function trend(points: readonly { t: number; v: number }[]): Trend {
  const valid = points.filter((p) => Number.isFinite(p.v));
  const values = valid.map((p) => p.v);
  const last = valid.at(-1)?.t ?? 0;
  const half = valid.filter((p) => p.t >= last / 2);
  const base = {
    start: values[0] ?? Number.NaN,
    end: values.at(-1) ?? Number.NaN,
    max: values.length > 0 ? Math.max(...values) : Number.NaN,
  };
  if (half.length < 3)
    return { ...base, slopeMBPerMinute: Number.NaN, growthSecondHalf: Number.NaN, verdict: 'too short' };
  const mt = half.reduce((a, p) => a + p.t, 0) / half.length;
  const mv = half.reduce((a, p) => a + p.v, 0) / half.length;
  const cov = half.reduce((a, p) => a + (p.t - mt) * (p.v - mv), 0);
  const vt = half.reduce((a, p) => a + (p.t - mt) ** 2, 0);
  const slope = vt > 0 ? cov / vt : 0; // bytes per second
  const t0 = half[0]?.t ?? 0;
  const t1 = half.at(-1)?.t ?? 0;
  const atStart = mv + slope * (t0 - mt);
  const growth = (slope * (t1 - t0)) / atStart;
  return {
    ...base,
    slopeMBPerMinute: (slope * 60) / 1024 / 1024,
    growthSecondHalf: growth,
    verdict: growth < FLAT_GROWTH ? 'flat' : 'growing',
  };
}

export async function runSoak(
  engine: Engine,
  server: ChildServer,
  token: string,
  reads: readonly Scenario[],
  params: Params,
): Promise<SoakReport> {
  const seconds = params.soakSeconds;
  const small = await ingestFile(params, params.soakUploadCases);
  const connections = params.connections;
  log(
    `soak ${engine}: ${seconds} s of ${reads.length} reads in turn at ${params.soakRate > 0 ? `${params.soakRate} req/s` : 'full speed'}` +
      ` + a ${small.testcases}-case upload a second; memory every ${params.soakSampleSeconds} s`,
  );
  const samples: MemorySample[] = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const elapsed = () => (performance.now() - t0) / 1000;
  samples.push(await sample(server, 0));
  const load = startLoad(server.url, reads, { connections, overallRate: params.soakRate });

  const uploadTimes: number[] = [];
  let uploadFailures = 0;
  const uploads = (async () => {
    for (let i = 0; performance.now() < end; i++) {
      const started = performance.now();
      try {
        const commit = createHash('sha1').update(`soak:${Date.now()}:${i}`).digest('hex');
        await upload(server.url, token, small.path, commit, {
          host: 'github.com',
          owner: 'acme',
          name: 'soak',
        });
        uploadTimes.push(performance.now() - started);
      } catch (error) {
        uploadFailures++;
        if (uploadFailures <= 3) log(`WARNING: soak upload failed: ${(error as Error).message}`);
      }
      await sleep(Math.max(0, 1000 - (performance.now() - started)));
    }
  })();

  let next = t0 + params.soakSampleSeconds * 1000;
  while (performance.now() < end) {
    await sleep(Math.max(0, Math.min(next, end) - performance.now()));
    if (performance.now() >= next - 5) {
      samples.push(await sample(server, elapsed()));
      const s = samples.at(-1);
      if (s !== undefined && samples.length % 6 === 0)
        log(
          `soak ${engine}: ${Math.round(s.t)} s, RSS ${(s.rss / 1048576).toFixed(0)} MB, heap ${(s.heapUsed / 1048576).toFixed(0)} MB`,
        );
      next += params.soakSampleSeconds * 1000;
    }
  }
  const stopAt = performance.now();
  await uploads;
  await load.stop();
  const final = samples.at(-1);
  if (final === undefined || final.t < seconds - 1) samples.push(await sample(server, elapsed()));
  const sortedUploads = uploadTimes.sort((a, b) => a - b);
  const rss = trend(samples.map((s) => ({ t: s.t, v: s.rss })));
  const heapFloor = trend(
    samples.map((s, i) => ({
      t: s.t,
      v: Math.min(...samples.slice(Math.max(0, i - FLOOR_SAMPLES + 1), i + 1).map((x) => x.heapUsed)),
    })),
  );
  log(
    `soak ${engine}: RSS ${(rss.start / 1048576).toFixed(0)} → ${(rss.end / 1048576).toFixed(0)} MB ` +
      `(max ${(rss.max / 1048576).toFixed(0)}), second half ${rss.slopeMBPerMinute.toFixed(2)} MB/min: ${rss.verdict}`,
  );
  return {
    engine,
    seconds,
    sampleSeconds: params.soakSampleSeconds,
    rate: params.soakRate,
    connections,
    reads: windowStats(load.samples, t0, stopAt),
    readNames: reads.map((r) => r.name),
    uploadCases: small.testcases,
    uploads: {
      n: sortedUploads.length,
      failed: uploadFailures,
      p50: quantile(sortedUploads, 0.5),
      p99: quantile(sortedUploads, 0.99),
      max: sortedUploads.at(-1) ?? Number.NaN,
    },
    samples,
    rss,
    heapFloor,
  };
}
