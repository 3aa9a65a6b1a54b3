// Ingestion throughput: a bare saxes parse of the generated report (the baseline), the service's
// parseJunitFile alone, and full uploads through the real HTTP server on each engine.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { SaxesParser } from 'saxes';
import { parseJunitFile } from '../src/app/ingest/parsing/parse-file.ts';
import { createToken } from '../src/app/tokens.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { type Engine, fmt, log, machineIdle, median, type Params, pgUrl } from './common.ts';
import { type GeneratedReport, generateJunit } from './junit-gen.ts';
import { startMainline } from './server.ts';

const CHUNK = 64 * 1024;

export interface IngestRow {
  readonly label: string;
  readonly engine: Engine | '-';
  readonly seconds: number;
  readonly casesPerSecond: number;
  /** Throughput as a fraction of the bare saxes parse's. */
  readonly ratio: number;
  /**
   * Upload rows: the bare saxes parse this row is compared with, measured at the same moment (right
   * before its uploads, and for some rows right after), since the machine's speed drifts.
   */
  readonly baseSeconds?: number;
  /** Peak RSS of the server process (uploads only). */
  readonly peakRss?: number;
  /**
   * CPU seconds per `report.testcases` cases ingested: the bench process's for the parse rows, the
   * server process's (all threads) for uploads; `mainCpu`: the server's request thread alone.
   */
  readonly cpu?: number;
  readonly mainCpu?: number;
  /** `cpu` as a multiple of the bare saxes parse's CPU seconds. */
  readonly cpuRatio?: number;
  readonly note?: string;
}

export interface IngestReport {
  readonly report: GeneratedReport;
  readonly rows: IngestRow[];
}

/** The baseline: saxes over the same bytes, decoded as UTF-8, counting <testcase> open tags. */
async function bareSaxes(file: string): Promise<number> {
  const parser = new SaxesParser({ xmlns: false });
  let count = 0;
  parser.on('opentag', (tag) => {
    if (tag.name === 'testcase') count++;
  });
  for await (const chunk of fs.createReadStream(file, { encoding: 'utf8', highWaterMark: CHUNK })) {
    parser.write(chunk as string);
  }
  parser.close();
  return count;
}

async function serviceParse(file: string): Promise<number> {
  const parsed = await parseJunitFile({
    name: 'report.xml',
    source: fs.createReadStream(file, { highWaterMark: CHUNK }),
    maxBytes: 2 ** 40,
  });
  if (!parsed.summary.ok)
    throw new Error(`parseJunitFile rejected the report: ${JSON.stringify(parsed.summary.problems)}`);
  return parsed.summary.counts.testcases;
}

/** Wall and CPU seconds (this process) of one run. */
async function timed(fn: () => Promise<number>, expected: number): Promise<{ seconds: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const n = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(c0);
  if (n !== expected) throw new Error(`expected ${expected} test cases, counted ${n}`);
  return { seconds, cpu: (used.user + used.system) / 1e6 };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Makes sure the database `mainline_bench` exists on the server of DATABASE_URL. */
export async function ensureBenchDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query(`select 1 from pg_database where datname = 'mainline_bench'`);
    if (found.rowCount === 0) await client.query('create database mainline_bench');
  } finally {
    await client.end();
  }
}

interface FreshDatabase {
  readonly location: { dataDir: string } | { databaseUrl: string };
  readonly token: string;
  cleanup(): Promise<void>;
}

/** An empty migrated database with an organization `bench` and a token for it. */
async function freshDatabase(engine: Engine, params: Params): Promise<FreshDatabase> {
  const token = `ml_bench_${randomBytes(16).toString('hex')}`;
  if (engine === 'sqlite') {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-bench-ingest-'));
    const database = openDatabase({ databaseUrl: undefined, dataDir });
    await migrateToLatest(database);
    await createToken(database.db, { orgSlug: 'bench', name: 'bench', now: Date.now(), token });
    await database.close();
    return {
      location: { dataDir },
      token,
      cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const schema = `ingest_${process.pid}_${randomBytes(3).toString('hex')}`;
  await adminQuery(pgUrl(params.pgAdminUrl), `create schema ${schema}`);
  const databaseUrl = pgUrl(params.pgAdminUrl, schema);
  const database = openDatabase({ databaseUrl, dataDir: '', poolSize: 2 });
  await migrateToLatest(database);
  await createToken(database.db, { orgSlug: 'bench', name: 'bench', now: Date.now(), token });
  await database.close();
  return {
    location: { databaseUrl },
    token,
    cleanup: () => adminQuery(pgUrl(params.pgAdminUrl), `drop schema ${schema} cascade`),
  };
}

export interface UploadAnswer {
  counts?: { test_cases?: number };
  error?: unknown;
}

/**
 * One multipart upload of a JUnit file to the repository `repo` of the organization `bench`: the
 * file streamed from disk into a node:http request. The load generator shares the machine's two
 * cores with the server, so it should cost as little as it can: fetch with a FormData body took
 * ~0.4 CPU-s per 52 MB upload (web streams copy every chunk), this ~0.1.
 */
export async function upload(
  url: string,
  token: string,
  file: string,
  commit: string,
  repo: { host: string; owner: string; name: string } = { host: 'github.com', owner: 'acme', name: 'web' },
): Promise<UploadAnswer> {
  const boundary = `----mainline-bench-${randomBytes(12).toString('hex')}`;
  const meta = JSON.stringify({
    repo,
    org_url_slug: 'bench',
    branch: 'main',
    commit_sha: commit,
    job_name: 'bench',
  });
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${meta}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="junit"; filename="report.xml"\r\n` +
      'Content-Type: application/xml\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = (await fs.promises.stat(file)).size;
  const target = new URL('/v1/test-results/upload', url);
  const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      target,
      {
        method: 'POST',
        headers: {
          'x-api-token': token,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + size + tail.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.write(head);
    const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
    stream.on('error', reject);
    stream.on('end', () => req.end(tail));
    stream.pipe(req, { end: false });
  });
  const answer = JSON.parse(body) as UploadAnswer;
  if (status !== 200) throw new Error(`upload answered ${status}: ${body.slice(0, 500)}`);
  return answer;
}

type Server = Awaited<ReturnType<typeof startMainline>>;

function checkCounted(answer: UploadAnswer, report: GeneratedReport): void {
  if (answer.counts?.test_cases !== report.testcases)
    throw new Error(`upload counted ${answer.counts?.test_cases} test cases, expected ${report.testcases}`);
}

/** The baseline: bare saxes' rate (test cases per second) and CPU seconds for the report. */
interface Base {
  readonly rate: number;
  readonly cpu: number;
  readonly cases: number;
  /** Seconds of the bare parse (the median of its runs). */
  readonly seconds: number;
}

type BareRun = { seconds: number; cpu: number };

function baseOf(runs: readonly BareRun[], cases: number): Base {
  const seconds = median(runs.map((r) => r.seconds));
  return { rate: cases / seconds, cpu: median(runs.map((r) => r.cpu)), cases, seconds };
}

/**
 * A bare saxes parse of the report now, in the bench process, once the machine is idle (the
 * server's checkpoint and collections after its last answer done, and PostgreSQL's own background
 * work): the machine's speed drifts by up to 2x within minutes, so each upload row is compared with
 * bare parses of its own moment, taken as the uploads start: on an idle machine.
 */
async function bareNow(report: GeneratedReport): Promise<BareRun> {
  await machineIdle('ingest: measuring the baseline');
  return timed(() => bareSaxes(report.path), report.testcases);
}

/** What a stretch of uploads took: `cases` test cases in `seconds`, the server's CPU seconds. */
interface Measured {
  readonly label: string;
  readonly engine: Engine;
  readonly seconds: number;
  readonly cases: number;
  readonly cpu: { total: number; main: number };
  readonly peakRss: number;
}

/** Times `work` (uploads to `server`) and takes what the server used meanwhile. */
async function measure(
  label: string,
  engine: Engine,
  server: Server,
  cases: number,
  work: () => Promise<void>,
): Promise<Measured> {
  const before = server.cpu();
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const after = server.cpu();
  const cpu = { total: after.total - before.total, main: after.main - before.main };
  return { label, engine, seconds, cases, cpu, peakRss: server.memory().peak };
}

/** The row of `m` against `base` (CPU per report-sized upload). */
function rowOf(m: Measured, base: Base): IngestRow {
  const rate = m.cases / m.seconds;
  const perReport = base.cases / m.cases;
  const cpu = m.cpu.total * perReport;
  return {
    label: m.label,
    engine: m.engine,
    seconds: m.seconds,
    casesPerSecond: rate,
    ratio: rate / base.rate,
    baseSeconds: base.seconds,
    peakRss: m.peakRss,
    cpu,
    mainCpu: m.cpu.main * perReport,
    cpuRatio: cpu / base.cpu,
  };
}

async function uploads(engine: Engine, params: Params, report: GeneratedReport): Promise<IngestRow[]> {
  const fresh = await freshDatabase(engine, params);
  const server = await startMainline(fresh.location);
  const rows: IngestRow[] = [];
  try {
    log(`ingest: upload, all tests new on ${engine}`);
    const first = await bareNow(report);
    const all = await oneUpload('upload, all tests new', engine, server, fresh.token, report, 'a');
    rows.push(rowOf(all, baseOf([first, await bareNow(report)], report.testcases)));
    // The same suite for other commits: the median of KNOWN_UPLOADS (the first one after the big
    // first upload also pays for its aftermath: the WAL checkpoint of every new row, its garbage),
    // each after a bare parse; the row is the median upload against the median bare parse.
    log(`ingest: upload again, tests known on ${engine} (${KNOWN_UPLOADS} uploads, median)`);
    const known: Measured[] = [];
    const bare: BareRun[] = [];
    for (let i = 0; i < KNOWN_UPLOADS; i++) {
      bare.push(await bareNow(report));
      known.push(await oneUpload('upload again, tests known', engine, server, fresh.token, report, `b${i}`));
    }
    const knownBase = baseOf(bare, report.testcases);
    const knownRows = known.map((m) => rowOf(m, knownBase)).sort((x, y) => x.seconds - y.seconds);
    rows.push(knownRows[Math.floor(knownRows.length / 2)] as IngestRow);
    rows.push(await sustained(engine, server, fresh.token, report));
    const stored = 1 + KNOWN_UPLOADS + SUSTAINED_UPLOADS;
    if (params.ingestHistory > stored)
      rows.push(await afterHistory(engine, server, fresh.token, report, stored, params.ingestHistory));
  } finally {
    await server.stop();
    await fresh.cleanup();
  }
  return rows;
}

/** Where part `small` sends the first upload of a fresh server, apart from the measured repository. */
const COLD_REPO = { host: 'github.com', owner: 'acme', name: 'cold-start' };

/**
 * Part `small`: uploads of the suite to COLD_REPO (tests known there), two in flight, before the
 * sustained row, so that it measures a warm server (its own repository's history unchanged). V8 tiers
 * the upload path's hot code up (Maglev, then TurboFan, in the request thread's isolate and in each
 * parser thread's own) over the first 20–30 uploads of a process; measured from the third upload on,
 * the sustained row's CPU held 20–30 ms per upload of V8's compiler threads and 5–10 ms more of
 * not-yet-optimised code, which a running server no longer pays (its compiler threads: 1–2 ms).
 */
const SMALL_WARMUP_UPLOADS = 30;

/** Uploads of the known suite one at a time; their median is the row. */
const KNOWN_UPLOADS = 3;

/** One upload of the report for a commit made of `prefix`, alone. */
function oneUpload(
  label: string,
  engine: Engine,
  server: Server,
  token: string,
  report: GeneratedReport,
  prefix: string,
): Promise<Measured> {
  return measure(label, engine, server, report.testcases, async () => {
    checkCounted(await upload(server.url, token, report.path, prefix.padEnd(40, prefix.slice(-1))), report);
  });
}

/** Uploads in a row, two in flight at a time (as CI jobs finishing together send them). */
const SUSTAINED_UPLOADS = 6;
const IN_FLIGHT = 2;

/**
 * Sustained throughput: while one upload is stored, the next one is received and parsed on a parser
 * thread, so the server's two stages overlap. Tests known (the suite was uploaded before).
 */
async function sustained(
  engine: Engine,
  server: Server,
  token: string,
  report: GeneratedReport,
): Promise<IngestRow> {
  const label = `${SUSTAINED_UPLOADS} uploads, ${IN_FLIGHT} in flight, tests known`;
  log(`ingest: ${label} on ${engine}`);
  const before = await bareNow(report);
  let next = 0;
  const sender = async () => {
    while (next < SUSTAINED_UPLOADS) {
      const commit = (next++).toString(16).padStart(40, 'c');
      checkCounted(await upload(server.url, token, report.path, commit), report);
    }
  };
  const all = await measure(label, engine, server, report.testcases * SUSTAINED_UPLOADS, async () => {
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
  });
  return rowOf(all, baseOf([before, await bareNow(report)], report.testcases));
}

/**
 * One more upload once `history` uploads of the suite are stored (the first `stored` by the rows
 * before): each upload adds a pass per test, so this shows what a repository's history costs the
 * next upload.
 */
async function afterHistory(
  engine: Engine,
  server: Server,
  token: string,
  report: GeneratedReport,
  stored: number,
  history: number,
): Promise<IngestRow> {
  const label = `upload, tests known, ${history} uploads stored before`;
  log(`ingest: storing ${history - stored} more uploads on ${engine}`);
  for (let i = stored; i < history; i++) {
    await upload(server.url, token, report.path, i.toString(16).padStart(40, 'd'));
  }
  log(`ingest: ${label} on ${engine}`);
  const before = await bareNow(report);
  const last = await oneUpload(label, engine, server, token, report, 'e');
  return rowOf(last, baseOf([before, await bareNow(report)], report.testcases));
}

const generated = new Map<number, Promise<GeneratedReport>>();

/**
 * The generated JUnit file of `cases` test cases in the cache dir, written once per run (its suites
 * carry a timestamp an hour before the run).
 */
export function ingestFile(params: Params, cases: number): Promise<GeneratedReport> {
  let report = generated.get(cases);
  if (report === undefined) {
    fs.mkdirSync(params.cacheDir, { recursive: true });
    const file = path.join(params.cacheDir, `junit-${cases}.xml`);
    log(`ingest: generating a ${cases}-case JUnit report`);
    report = generateJunit(file, cases).then((r) => {
      log(`ingest: ${(r.bytes / 1024 / 1024).toFixed(1)} MB, ${r.failures} failures, ${r.skipped} skipped`);
      return r;
    });
    generated.set(cases, report);
  }
  return report;
}

export async function runIngest(params: Params): Promise<IngestReport> {
  const report = await ingestFile(params, params.ingestCases);
  const file = report.path;

  const saxRuns: { seconds: number; cpu: number }[] = [];
  const parseRuns: { seconds: number; cpu: number }[] = [];
  for (let i = 0; i < params.parseRepeat; i++) {
    saxRuns.push(await timed(() => bareSaxes(file), report.testcases));
    parseRuns.push(await timed(() => serviceParse(file), report.testcases));
  }
  const sax = median(saxRuns.map((r) => r.seconds));
  const parse = median(parseRuns.map((r) => r.seconds));
  const saxCpu = median(saxRuns.map((r) => r.cpu));
  const parseCpu = median(parseRuns.map((r) => r.cpu));
  const base: Base = { rate: report.testcases / sax, cpu: saxCpu, cases: report.testcases, seconds: sax };
  const rows: IngestRow[] = [
    {
      label: 'bare saxes parse (baseline)',
      engine: '-',
      seconds: sax,
      casesPerSecond: base.rate,
      ratio: 1,
      cpu: saxCpu,
      cpuRatio: 1,
    },
    {
      label: 'parseJunitFile',
      engine: '-',
      seconds: parse,
      casesPerSecond: report.testcases / parse,
      ratio: sax / parse,
      cpu: parseCpu,
      cpuRatio: parseCpu / saxCpu,
    },
  ];
  for (const engine of params.engines) rows.push(...(await uploads(engine, params, report)));
  return { report, rows };
}

export interface SmallIngestReport {
  readonly report: GeneratedReport;
  /** Uploads of the sustained row. */
  readonly uploads: number;
  readonly rows: IngestRow[];
}

/** Bare parses of a small report now (once the machine is idle): several, since one takes milliseconds. */
async function bareSmall(report: GeneratedReport, runs: number): Promise<BareRun[]> {
  await machineIdle('small reports: measuring the baseline');
  const out: BareRun[] = [];
  for (let i = 0; i < runs; i++) out.push(await timed(() => bareSaxes(report.path), report.testcases));
  return out;
}

/**
 * Part `small` (issue 25): 5,000-case reports of small test cases (about 200 bytes each) ingested
 * sustained, two in flight, against a bare saxes parse of the same bytes. Per engine: the first
 * upload (all tests new), then BENCH_SMALL_UPLOADS uploads of the same suite for other commits.
 */
export async function runSmall(params: Params): Promise<SmallIngestReport> {
  fs.mkdirSync(params.cacheDir, { recursive: true });
  const file = path.join(params.cacheDir, `junit-small-${params.smallCases}.xml`);
  log(`small reports: generating a ${params.smallCases}-case JUnit report of small test cases`);
  const report = await generateJunit(file, params.smallCases, { small: true });
  log(
    `small reports: ${(report.bytes / 1024).toFixed(0)} KB (${(report.bytes / report.testcases).toFixed(0)} bytes a test case)`,
  );
  const repeat = Math.max(params.parseRepeat, 9);
  const sax = await bareSmall(report, repeat);
  const parseRuns: BareRun[] = [];
  for (let i = 0; i < repeat; i++) parseRuns.push(await timed(() => serviceParse(file), report.testcases));
  const base = baseOf(sax, report.testcases);
  const parse = median(parseRuns.map((r) => r.seconds));
  const parseCpu = median(parseRuns.map((r) => r.cpu));
  const rows: IngestRow[] = [
    {
      label: `bare saxes parse of one ${fmt.int(report.testcases)}-case report (baseline)`,
      engine: '-',
      seconds: base.seconds,
      casesPerSecond: base.rate,
      ratio: 1,
      cpu: base.cpu,
      cpuRatio: 1,
    },
    {
      label: 'parseJunitFile, same report',
      engine: '-',
      seconds: parse,
      casesPerSecond: report.testcases / parse,
      ratio: base.seconds / parse,
      cpu: parseCpu,
      cpuRatio: parseCpu / base.cpu,
    },
  ];
  for (const engine of params.engines) {
    const fresh = await freshDatabase(engine, params);
    const server = await startMainline(fresh.location);
    try {
      // The first upload to a fresh server also starts its parser threads and warms its code; it is
      // kept as its own row, and the "all tests new" row is a second repository's first upload; then
      // SMALL_WARMUP_UPLOADS more to the first repository finish the warm-up before the sustained row.
      log(`small reports: first upload to a fresh server (all tests new) on ${engine}`);
      const coldBase = await bareSmall(report, repeat);
      const cold = await measure(
        'small report, all tests new, fresh server',
        engine,
        server,
        report.testcases,
        async () => {
          const commit = 'e'.repeat(40);
          checkCounted(await upload(server.url, fresh.token, report.path, commit, COLD_REPO), report);
        },
      );
      rows.push(rowOf(cold, baseOf(coldBase, report.testcases)));
      log(`small reports: first upload (all tests new) on ${engine}`);
      const before = await bareSmall(report, repeat);
      const first = await oneUpload('small report, all tests new', engine, server, fresh.token, report, 'f');
      rows.push(rowOf(first, baseOf(before, report.testcases)));
      log(
        `small reports: warming the server up (${SMALL_WARMUP_UPLOADS} uploads to ${COLD_REPO.name}) on ${engine}`,
      );
      let warmed = 0;
      const warmer = async () => {
        while (warmed < SMALL_WARMUP_UPLOADS) {
          const commit = (warmed++).toString(16).padStart(40, 'a');
          checkCounted(await upload(server.url, fresh.token, report.path, commit, COLD_REPO), report);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, warmer));
      const label = `${params.smallUploads} small reports, ${IN_FLIGHT} in flight, tests known`;
      log(`small reports: ${label} on ${engine}`);
      const bare = await bareSmall(report, repeat);
      let next = 0;
      const sender = async () => {
        while (next < params.smallUploads) {
          const commit = (next++).toString(16).padStart(40, '5');
          checkCounted(await upload(server.url, fresh.token, report.path, commit), report);
        }
      };
      const all = await measure(label, engine, server, report.testcases * params.smallUploads, async () => {
        await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
      });
      rows.push(rowOf(all, baseOf([...bare, ...(await bareSmall(report, repeat))], report.testcases)));
    } catch (error) {
      log(`small reports: the server said:\n${server.output().slice(-4000)}`);
      throw error;
    } finally {
      await server.stop();
      await fresh.cleanup();
    }
  }
  return { report, uploads: params.smallUploads, rows };
}
