// Parameters of a bench run and small helpers shared by the bench modules.
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

function list(name: string, fallback: string[]): string[] {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export type Engine = 'sqlite' | 'postgres';

/** Everything a run depends on, read once from the environment. */
export interface Params {
  /** BENCH_SCALE: 1 is the scale (100k-case file; 200k test cases and 5M results). */
  readonly scale: number;
  /** Test cases in the generated JUnit file. */
  readonly ingestCases: number;
  /** Test cases and results of the main repository of the read benchmark. */
  readonly readCases: number;
  readonly readResults: number;
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
  /** BENCH_ENGINES: sqlite,postgres. */
  readonly engines: Engine[];
  /** BENCH_ONLY: ingest,reads. */
  readonly parts: ('ingest' | 'reads')[];
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
  const parts = list('BENCH_ONLY', ['ingest', 'reads']).filter(
    (p): p is 'ingest' | 'reads' => p === 'ingest' || p === 'reads',
  );
  const engines = list('BENCH_ENGINES', ['sqlite', 'postgres']).filter(
    (e): e is Engine => e === 'sqlite' || e === 'postgres',
  );
  const docsEnv = process.env['BENCH_DOCS']?.trim();
  const fullRun = scale === 1 && parts.length === 2 && engines.length === 2;
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
    otherCases: Math.round(20_000 * scale),
    otherResults: Math.round(500_000 * scale),
    duration: num('BENCH_DURATION', 10),
    connections: Math.round(num('BENCH_CONNECTIONS', 10)),
    sequential: Math.round(num('BENCH_SEQUENTIAL', 500)),
    parseRepeat: Math.round(num('BENCH_INGEST_REPEAT', 5)),
    engines,
    parts,
    cacheDir: path.resolve(process.env['BENCH_CACHE_DIR'] ?? path.join(os.tmpdir(), 'mainline-bench')),
    pgAdminUrl: process.env['DATABASE_URL']?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres',
    seedMaxAgeHours: num('BENCH_SEED_MAX_AGE_HOURS', 48),
    docsPath,
  };
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
