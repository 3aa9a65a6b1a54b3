// Parameters of a bench run and small helpers shared by the bench modules.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');

function num(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** Like num, but 0 is allowed (it turns the part off). */
function numOrZero(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, got "${raw}"`);
  return value;
}

function list(name: string, fallback: string[]): string[] {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export type Engine = 'sqlite' | 'postgres';

/**
 * Parts of a run (BENCH_ONLY): ingest (parse and upload a big file into a fresh database), reads
 * (every read endpoint on the seeded database), contention (a big upload while list-unhealthy-tests
 * is under load, on the seeded database), soak (mixed load for BENCH_SOAK_SECONDS, memory sampled),
 * small (5,000-case reports ingested sustained, against a bare parse of the same bytes), day (every
 * read endpoint on a database whose whole history was uploaded within the last day).
 */
export const ALL_PARTS = ['ingest', 'reads', 'contention', 'soak', 'small', 'day'] as const;
export type Part = (typeof ALL_PARTS)[number];

/** Everything a run depends on, read once from the environment. */
export interface Params {
  /** BENCH_SCALE: 1 is the scale (100k-case file; 200k test cases and 5M results). */
  readonly scale: number;
  /** Test cases in the generated JUnit file. */
  readonly ingestCases: number;
  /** Test cases and results of the main repository of the read benchmark. */
  readonly readCases: number;
  readonly readResults: number;
  /**
   * BENCH_DAY_SCALE (default BENCH_SCALE): the one-day shape's size as a fraction of 200k tests and
   * 5M results, all uploaded within the last day.
   */
  readonly dayScale: number;
  readonly dayCases: number;
  readonly dayResults: number;
  /** BENCH_SMALL_CASES: test cases of each small report (default 5,000). */
  readonly smallCases: number;
  /** BENCH_SMALL_UPLOADS: small reports uploaded in the sustained run (default 20, two in flight). */
  readonly smallUploads: number;
  /**
   * BENCH_SAME_BYTES (default 1; 0 turns it off): measure every read again against a bare Fastify
   * route serving the same response bytes from memory.
   */
  readonly sameBytes: boolean;
  /** Of the second repository (another organization). */
  readonly otherCases: number;
  readonly otherResults: number;
  /** BENCH_DURATION: seconds of each autocannon run. */
  readonly duration: number;
  /** BENCH_CONNECTIONS: concurrent connections of each autocannon run. */
  readonly connections: number;
  /** BENCH_SEQUENTIAL: requests of the one-at-a-time loop (fine-grained percentiles). */
  readonly sequential: number;
  /** BENCH_INGEST_REPEAT: repetitions of the in-process parse measurements (median reported). */
  readonly parseRepeat: number;
  /**
   * BENCH_INGEST_HISTORY: uploads of the suite stored before the last measured upload (0 skips it):
   * how an upload's cost grows with the history already stored.
   */
  readonly ingestHistory: number;
  /** BENCH_ENGINES: sqlite,postgres. */
  readonly engines: Engine[];
  /** BENCH_ONLY: ingest,reads,contention,soak,small,day. */
  readonly parts: Part[];
  /**
   * BENCH_WRK: the wrk binary (default: wrk on PATH); 0 turns wrk off. Undefined when absent: the
   * load figures are then autocannon's only.
   */
  readonly wrk: string | undefined;
  /** Why wrk is not used (absent, or turned off), for the report. */
  readonly wrkMissing: string | undefined;
  /** BENCH_WRK_THREADS: wrk threads (default 1: the server needs the other core). */
  readonly wrkThreads: number;
  /** BENCH_READ_QUEUE_PRS: pull requests submitted to the merge queue seeded for the queue reads. */
  readonly queuePrs: number;
  /** BENCH_SOAK_SECONDS: length of the soak (default 600; 0 skips it). */
  readonly soakSeconds: number;
  /** BENCH_SOAK_SAMPLE_SECONDS: memory sampling interval of the soak (default 10; a twentieth of a soak under 200 s). */
  readonly soakSampleSeconds: number;
  /** BENCH_SOAK_ENGINE: the engine the soak runs on (default the first engine of the run). */
  readonly soakEngine: Engine | undefined;
  /** BENCH_SOAK_RATE: reads per second of the soak's read load (default 200; 0: as fast as possible). */
  readonly soakRate: number;
  /** BENCH_SOAK_UPLOAD_CASES: test cases of each small upload of the soak (one a second; default 200). */
  readonly soakUploadCases: number;
  /** BENCH_CACHE_DIR: generated files and seeded SQLite databases, kept between runs. */
  readonly cacheDir: string;
  /** DATABASE_URL (admin connection); the bench works in the database `mainline_bench`. */
  readonly pgAdminUrl: string;
  /** Seeded data older than this is seeded again (its 24 h / 7 d windows would be empty). */
  readonly seedMaxAgeHours: number;
  /** Where the markdown goes (BENCH_DOCS), or undefined to skip writing it. */
  readonly docsPath: string | undefined;
}

export function readParams(): Params {
  const scale = num('BENCH_SCALE', 1);
  const dayScale = num('BENCH_DAY_SCALE', scale);
  const parts = list('BENCH_ONLY', [...ALL_PARTS]).filter((p): p is Part =>
    (ALL_PARTS as readonly string[]).includes(p),
  );
  const engines = list('BENCH_ENGINES', ['sqlite', 'postgres']).filter(
    (e): e is Engine => e === 'sqlite' || e === 'postgres',
  );
  const docsEnv = process.env['BENCH_DOCS']?.trim();
  const fullRun = scale === 1 && dayScale === 1 && parts.length === ALL_PARTS.length && engines.length === 2;
  const wrk = findWrk();
  const soakEngineEnv = process.env['BENCH_SOAK_ENGINE']?.trim();
  const soakEngine = soakEngineEnv === 'sqlite' || soakEngineEnv === 'postgres' ? soakEngineEnv : engines[0];
  const docsPath =
    docsEnv === '0' || docsEnv === 'false'
      ? undefined
      : docsEnv !== undefined && docsEnv !== ''
        ? path.resolve(docsEnv)
        : fullRun
          ? path.join(ROOT, 'docs', 'benchmarks.md')
          : path.join(
              process.env['BENCH_CACHE_DIR'] ?? path.join(os.tmpdir(), 'mainline-bench'),
              'benchmarks.md',
            );
  return {
    scale,
    ingestCases: Math.round(100_000 * scale),
    readCases: Math.round(200_000 * scale),
    readResults: Math.round(5_000_000 * scale),
    dayScale,
    dayCases: Math.round(200_000 * dayScale),
    dayResults: Math.round(5_000_000 * dayScale),
    smallCases: Math.round(num('BENCH_SMALL_CASES', 5000)),
    smallUploads: Math.round(num('BENCH_SMALL_UPLOADS', 20)),
    sameBytes: !['0', 'false'].includes(process.env['BENCH_SAME_BYTES']?.trim() ?? ''),
    otherCases: Math.round(20_000 * scale),
    otherResults: Math.round(500_000 * scale),
    duration: num('BENCH_DURATION', 10),
    connections: Math.round(num('BENCH_CONNECTIONS', 10)),
    sequential: Math.round(num('BENCH_SEQUENTIAL', 500)),
    parseRepeat: Math.round(num('BENCH_INGEST_REPEAT', 5)),
    ingestHistory: Math.round(numOrZero('BENCH_INGEST_HISTORY', 30)),
    engines,
    parts,
    wrk: wrk.path,
    wrkMissing: wrk.missing,
    wrkThreads: Math.round(num('BENCH_WRK_THREADS', 1)),
    queuePrs: Math.round(num('BENCH_READ_QUEUE_PRS', 40)),
    soakSeconds: numOrZero('BENCH_SOAK_SECONDS', 600),
    soakSampleSeconds: num(
      'BENCH_SOAK_SAMPLE_SECONDS',
      soakSampleDefault(numOrZero('BENCH_SOAK_SECONDS', 600)),
    ),
    soakEngine,
    soakRate: numOrZero('BENCH_SOAK_RATE', 200),
    soakUploadCases: Math.round(num('BENCH_SOAK_UPLOAD_CASES', 200)),
    cacheDir: path.resolve(process.env['BENCH_CACHE_DIR'] ?? path.join(os.tmpdir(), 'mainline-bench')),
    pgAdminUrl: process.env['DATABASE_URL']?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres',
    seedMaxAgeHours: num('BENCH_SEED_MAX_AGE_HOURS', 48),
    docsPath,
  };
}

/** 10 s, or a twentieth of a short soak, so even a quick check has enough samples for a slope. */
function soakSampleDefault(soakSeconds: number): number {
  return Math.max(1, Math.min(10, soakSeconds / 20));
}

/** The wrk binary: BENCH_WRK (a path, or 0/false to turn it off), else `wrk` on PATH. */
function findWrk(): { path: string | undefined; missing: string | undefined } {
  const env = process.env['BENCH_WRK']?.trim();
  if (env === '0' || env === 'false') return { path: undefined, missing: 'turned off by BENCH_WRK=0' };
  if (env !== undefined && env !== '') {
    return fs.existsSync(env)
      ? { path: env, missing: undefined }
      : { path: undefined, missing: `BENCH_WRK=${env} does not exist` };
  }
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'wrk');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return { path: candidate, missing: undefined };
    } catch {
      // not here
    }
  }
  return { path: undefined, missing: 'wrk is not installed (not on PATH)' };
}

/** The PostgreSQL URL of the bench database, optionally pinned to one schema through search_path. */
export function pgUrl(adminUrl: string, schema?: string): string {
  const url = new URL(adminUrl);
  url.pathname = '/mainline_bench';
  if (schema !== undefined) url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The q-quantile (0..1) of sorted values, nearest-rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A small deterministic PRNG (mulberry32) so seeded data is the same on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const fmt = {
  int: (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a'),
  ms: (n: number) =>
    Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) : 'n/a',
  ratio: (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a'),
  mb: (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(0)} MB` : 'n/a'),
  s: (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a'),
};

/** Busy and total CPU time of the whole machine so far (Linux /proc/stat, clock ticks). */
function machineCpu(): { busy: number; total: number } {
  const fields = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/**
 * Waits (at most IDLE_WAIT_MS) until the machine's cores were at most 5% busy for half a second:
 * before a measurement that should not inherit the previous one's aftermath (a server's collections
 * after a load, a checkpoint). `what` names the measurement in the log line of a wait given up.
 */
export async function machineIdle(what: string): Promise<void> {
  const deadline = Date.now() + IDLE_WAIT_MS;
  await sleep(500);
  for (;;) {
    const a = machineCpu();
    await sleep(500);
    const b = machineCpu();
    const busy = (b.busy - a.busy) / Math.max(1, b.total - a.total);
    if (busy <= 0.05) return;
    if (Date.now() > deadline) {
      log(`${what}: the machine is still ${(busy * 100).toFixed(0)}% busy; measuring anyway`);
      return;
    }
  }
}

const IDLE_WAIT_MS = 20_000;
