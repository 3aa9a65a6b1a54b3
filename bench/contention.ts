// Ingestion under concurrent reads, on the seeded database (scratch copy) and its running server:
// list-unhealthy-tests page 1 under autocannon load alone, the big upload alone, then the same upload
// while the same read load runs. Each upload goes to a repository of its own (all its tests new), so
// the list being read does not change. Latencies are autocannon's per-answer times (sub-ms), cut to
// the requests sent while the upload was in flight.
import { createHash } from 'node:crypto';
import { type Engine, log, type Params, sleep } from './common.ts';
import { ingestFile, upload } from './ingest.ts';
import { type Scenario, startLoad, type WindowStats, windowStats } from './load.ts';
import type { ChildServer } from './server.ts';

export interface ContentionReport {
  readonly engine: Engine;
  readonly cases: number;
  readonly megabytes: number;
  readonly connections: number;
  /** Upload seconds without reads, and while the reads ran. */
  readonly uploadAlone: number;
  readonly uploadDuring: number;
  /** The read load alone (params.duration seconds) and during the upload. */
  readonly readsAlone: WindowStats;
  readonly readsDuring: WindowStats;
  /** Server peak RSS after both uploads. */
  readonly peakRss: number;
}

const sha = (s: string) => createHash('sha1').update(s).digest('hex');

async function timedUpload(server: ChildServer, token: string, file: string, name: string): Promise<number> {
  const t0 = performance.now();
  const answer = await upload(server.url, token, file, sha(`${name}:${Date.now()}`), {
    host: 'github.com',
    owner: 'acme',
    name,
  });
  if (answer.counts?.test_cases === undefined) throw new Error(`upload to ${name} counted nothing`);
  return (performance.now() - t0) / 1000;
}

export async function measureContention(
  engine: Engine,
  server: ChildServer,
  token: string,
  read: Scenario,
  params: Params,
): Promise<ContentionReport> {
  const report = await ingestFile(params, params.ingestCases);
  const connections = params.connections;

  log(`contention ${engine}: ${read.name} alone for ${params.duration} s`);
  const alone = startLoad(server.url, [read], { connections });
  await sleep(1000);
  const aloneFrom = performance.now();
  await sleep(params.duration * 1000);
  const aloneTo = performance.now();
  await alone.stop();
  const readsAlone = windowStats(alone.samples, aloneFrom, aloneTo);

  log(`contention ${engine}: ${report.testcases}-case upload alone`);
  const uploadAlone = await timedUpload(server, token, report.path, 'ingest-alone');

  log(`contention ${engine}: the same upload under ${connections} connections of ${read.name}`);
  const during = startLoad(server.url, [read], { connections });
  await sleep(1000);
  const from = performance.now();
  const uploadDuring = await timedUpload(server, token, report.path, 'ingest-during-reads');
  const to = performance.now();
  // Requests held up by the upload complete right after it: give them a moment before stopping.
  await sleep(1000);
  await during.stop();
  const readsDuring = windowStats(during.samples, from, to);
  log(
    `contention ${engine}: upload ${uploadAlone.toFixed(1)} s alone, ${uploadDuring.toFixed(1)} s with reads; ` +
      `read p99 ${readsAlone.p99.toFixed(1)} ms alone, ${readsDuring.p99.toFixed(1)} ms during the upload`,
  );
  return {
    engine,
    cases: report.testcases,
    megabytes: report.bytes / 1024 / 1024,
    connections,
    uploadAlone,
    uploadDuring,
    readsAlone,
    readsDuring,
    peakRss: server.memory().peak,
  };
}
