// `npm run bench`: ingestion throughput, every read endpoint at scale (autocannon, wrk where
// installed, and one request at a time), ingestion under concurrent reads, and a soak with memory
// sampling, as ratios to baselines measured in the same run. Not part of `npm test`. Environment:
// BENCH_SCALE (default 1), BENCH_ONLY (ingest,reads,contention,soak,small,day), BENCH_ENGINES (sqlite,postgres),
// BENCH_DURATION (s), BENCH_CONNECTIONS, BENCH_SEQUENTIAL, BENCH_INGEST_REPEAT, BENCH_WRK (path or 0),
// BENCH_WRK_THREADS, BENCH_READ_QUEUE_PRS, BENCH_SOAK_SECONDS (0 skips), BENCH_SOAK_ENGINE,
// BENCH_SOAK_RATE, BENCH_SOAK_UPLOAD_CASES, BENCH_SOAK_SAMPLE_SECONDS, BENCH_CACHE_DIR,
// BENCH_DOCS (file, or 0), BENCH_DOCS_SECTION (1: replace only the issue-25 section of BENCH_DOCS),
// BENCH_DAY_SCALE, BENCH_SMALL_CASES, BENCH_SMALL_UPLOADS, BENCH_SAME_BYTES, DATABASE_URL. The Reproduce section of docs/benchmarks.md (bench/report.ts
// REPRODUCE) lists them with their defaults.
import os from 'node:os';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { type Engine, log, type Params, readParams } from './common.ts';
import {
  ensureBenchDatabase,
  type IngestReport,
  runIngest,
  runSmall,
  type SmallIngestReport,
} from './ingest.ts';
import { type ReadsReport, runReads } from './reads.ts';
import { type Machine, renderText, writeMarkdown, writeSection } from './report.ts';

async function postgresVersion(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const res = await client.query<{ v: string }>("select current_setting('server_version') as v");
    return `PostgreSQL ${res.rows[0]?.v ?? '?'}`;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function machine(postgres: string | undefined): Machine {
  const memory = new BetterSqlite3(':memory:');
  const sqlite = (memory.prepare('select sqlite_version() as v').get() as { v: string }).v;
  memory.close();
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    sqlite,
    postgres: postgres ?? 'PostgreSQL not reachable',
  };
}

function command(params: Params): string {
  const env = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`);
  void params;
  return [...env, 'npm run bench'].join(' ');
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadBefore = os.loadavg()[0] ?? 0;
  const params = readParams();
  if (loadBefore > 1)
    log(`WARNING: load average ${loadBefore.toFixed(2)}: something else is running, figures will suffer`);
  const skipped: string[] = [];
  const pgVersion = params.engines.includes('postgres')
    ? await postgresVersion(params.pgAdminUrl)
    : undefined;
  let engines: Engine[] = params.engines;
  if (params.engines.includes('postgres') && pgVersion === undefined) {
    engines = engines.filter((e) => e !== 'postgres');
    skipped.push(`PostgreSQL: nothing answers at ${new URL(params.pgAdminUrl).host} (set DATABASE_URL)`);
    log(`PostgreSQL not reachable at ${new URL(params.pgAdminUrl).host}: SQLite only`);
  }
  if (engines.includes('postgres')) await ensureBenchDatabase(params.pgAdminUrl);
  const run = { ...params, engines };

  let ingest: IngestReport | undefined;
  let reads: ReadsReport | undefined;
  let small: SmallIngestReport | undefined;
  if (params.parts.includes('ingest')) ingest = await runIngest(run);
  if (params.parts.includes('small')) small = await runSmall(run);
  if (params.parts.includes('soak') && params.soakSeconds === 0) skipped.push('soak: BENCH_SOAK_SECONDS=0');
  else if (params.parts.includes('soak') && !engines.some((e) => e === params.soakEngine))
    skipped.push(`soak: its engine (${params.soakEngine ?? 'none'}) is not part of this run`);
  if (params.wrk === undefined) log(`wrk: ${params.wrkMissing}; autocannon only`);
  if (params.parts.some((p) => p !== 'ingest' && p !== 'small')) reads = await runReads(run, engines);

  const report = {
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    command: command(params),
    machine: machine(pgVersion),
    params: run,
    seconds: (performance.now() - started) / 1000,
    load: { before: loadBefore, after: os.loadavg()[0] ?? 0 },
    ingest,
    small,
    reads,
    skipped,
  };
  process.stdout.write(renderText(report));
  if (params.docsPath !== undefined) {
    if (['1', 'true'].includes(process.env['BENCH_DOCS_SECTION']?.trim() ?? '')) {
      writeSection(report, params.docsPath);
      log(`wrote the issue-25 section of ${params.docsPath}`);
    } else {
      writeMarkdown(report, params.docsPath);
      log(`wrote ${params.docsPath}`);
    }
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
}
