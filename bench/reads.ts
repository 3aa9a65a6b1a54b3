// Read latency at scale: every read endpoint of the API (flaky tests, repositories, quarantine
// config, settings, merge queue) of the real server on a scratch copy of the seeded database, against
// a bare Fastify endpoint measured in the same run; then, on the same copy, ingestion under reads
// (contention.ts) and the soak (soak.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Engine, log, type Params } from './common.ts';
import { type ContentionReport, measureContention } from './contention.ts';
import { measureDashboard } from './dashboard.ts';
import { type LoadResult, measure, post, type Scenario, sendScenario } from './load.ts';
import { type SeededQueue, seedQueue } from './queue-seed.ts';
import { captureAnswers, meanBytes, measureSameBytes } from './same-bytes.ts';
import { scratchCopy } from './scratch.ts';
import {
  clearSnapshots,
  ensureSeeded,
  openSeeded,
  type Seeded,
  type SeededRepo,
  type Shape,
} from './seed.ts';
import { type ChildServer, startBaseline, startMainline } from './server.ts';
import { runSoak, type SoakReport } from './soak.ts';

export interface EngineReads {
  readonly engine: Engine;
  /** How the seeded history is laid out in time (seed.ts). */
  readonly shape: Shape;
  readonly seeded: Seeded;
  /** Seconds the scratch copy of the seeded database took. */
  readonly copySeconds: number;
  /** Empty when the reads part was not run. */
  readonly results: LoadResult[];
  /** Snapshot rows the list endpoints wrote during the run (page 1 of a multi-page list freezes its order). */
  readonly snapshotRows: number;
  /** Which page the "later page" scenario reads (0-based). */
  readonly laterPage: number;
  readonly totalUnhealthy: number;
  readonly queue?: SeededQueue | undefined;
  /** Why the merge queue could not be built (its reads are then missing). */
  readonly queueProblem?: string | undefined;
  readonly contention?: ContentionReport | undefined;
  readonly soak?: SoakReport | undefined;
}

export interface ReadsReport {
  /** Undefined when neither the reads nor the day part was run. */
  readonly baseline?: LoadResult | undefined;
  /** The parts on the 30-day spread (reads, contention, soak), engine by engine. */
  readonly engines: EngineReads[];
  /** The reads on the one-day shape (part day), engine by engine. */
  readonly day: EngineReads[];
}

const LATER_PAGE = 9;
const API = '/v1';
const DAY_MS = 24 * 3_600_000;

interface PageAnswer {
  page?: { next_page_token: string; total_rows: number; page_index: number };
}

/** Walks a paged list to its page LATER_PAGE + 1 (or its last): that page's token, index and the total. */
async function laterPageToken(
  url: string,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): Promise<{ token: string; index: number; total: number }> {
  let token = '';
  let index = 0;
  let total = 0;
  for (let i = 0; i < LATER_PAGE; i++) {
    const pageQuery = token === '' ? { page_size: 100 } : { page_size: 100, page_token: token };
    const res = await post(url, headers, JSON.stringify({ ...body, page_query: pageQuery }));
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${res.text.slice(0, 300)}`);
    const page = (JSON.parse(res.text) as PageAnswer).page;
    if (page === undefined) break;
    total = page.total_rows;
    if (page.next_page_token === '') break;
    token = page.next_page_token;
    index = page.page_index + 1;
  }
  return { token, index, total };
}

async function check(url: string, s: Scenario): Promise<void> {
  const res = await sendScenario(url, s, 0);
  if (res.status !== 200) {
    log(`WARNING: ${s.name} answered ${res.status}: ${res.text.slice(0, 300)}`);
  }
}

/** A thousand tests of the main repository as the uploader names them to getQuarantineConfig. */
async function testIdentifiers(seeded: { location: Seeded['location'] }, main: SeededRepo) {
  const database = openSeeded(seeded.location);
  try {
    const rows = await database.db
      .selectFrom('test_cases')
      .select(['name', 'parent', 'classname', 'file'])
      .where('repo_id', '=', main.repoId)
      .orderBy('id')
      .limit(1000)
      .execute();
    return rows.map((r) => ({ name: r.name, parentName: r.parent, className: r.classname, file: r.file }));
  } finally {
    await database.close();
  }
}

interface Built {
  readonly scenarios: Scenario[];
  /** The subset the soak cycles through. */
  readonly soakMix: Scenario[];
  readonly listUnhealthy: Scenario;
  readonly later: { token: string; index: number; total: number };
}

/** The merge-queue reads of the seeded queue: getQueue and getSubmittedPullRequest first (the soak's). */
async function queueScenarios(
  server: ChildServer,
  headers: Record<string, string>,
  queue: SeededQueue,
): Promise<Scenario[]> {
  const qref = { repo: queue.repo, targetBranch: queue.targetBranch };
  // Test runs whose details the server can still give (live or archived).
  const runIds: string[] = [];
  for (const id of queue.runIds) {
    const res = await post(
      `${server.url}${API}/getMergeQueueTestingDetails`,
      headers,
      JSON.stringify({ ...qref, testRunId: id }),
    );
    if (res.status === 200) runIds.push(id);
  }
  const inQueue = Object.entries(queue.states)
    .filter(([s]) => !['merged', 'failed', 'cancelled'].includes(s))
    .reduce((a, [, n]) => a + n, 0);
  const json = (body: unknown) => JSON.stringify(body);
  return [
    {
      name: `getQueue (${inQueue} PRs in the queue)`,
      path: `${API}/getQueue`,
      headers,
      bodies: [json(qref)],
    },
    {
      name: `getSubmittedPullRequest (${queue.prNumbers.length} PRs in turn)`,
      path: `${API}/getSubmittedPullRequest`,
      headers,
      bodies: queue.prNumbers.map((n) => json({ ...qref, pr: { number: n } })),
    },
    {
      name: `getMergeQueueTestingDetails (${runIds.length} runs in turn, live and archived)`,
      path: `${API}/getMergeQueueTestingDetails`,
      headers,
      bodies: runIds.map((id) => json({ ...qref, testRunId: id })),
    },
    {
      name: 'listPullRequests, take 50',
      path: `${API}/listPullRequests`,
      headers,
      bodies: [json({ ...qref, take: 50 })],
    },
    {
      name: 'getMergeQueueMetrics (GET, Prometheus text)',
      path: `${API}/getMergeQueueMetrics`,
      method: 'GET',
      headers: { 'x-api-token': headers['x-api-token'] ?? '' },
      bodies: [],
    },
  ];
}

async function buildScenarios(
  server: ChildServer,
  seeded: Seeded,
  identifiers: Awaited<ReturnType<typeof testIdentifiers>>,
  queue: SeededQueue | undefined,
): Promise<Built> {
  const main = seeded.meta.main;
  const headers = { 'content-type': 'application/json', 'x-api-token': main.token };
  const scope = { repo: main.repo, org_url_slug: main.orgSlug };
  const flaky = `${API}/flaky-tests`;
  const listPath = `${flaky}/list-unhealthy-tests`;
  const quarantinedPath = `${flaky}/list-quarantined-tests`;
  const listBody = { ...scope, status: 'FLAKY' };
  const later = await laterPageToken(server.url + listPath, headers, listBody);
  const laterQuarantined = await laterPageToken(server.url + quarantinedPath, headers, scope);
  // The failing-tests windows end at the hour after seeding, so they hold the seeded results.
  const end = Math.ceil(seeded.meta.seededAt / 3_600_000) * 3_600_000;
  const failing = (days: number) => ({
    ...scope,
    start_time: new Date(end - days * DAY_MS).toISOString(),
    end_time: new Date(end).toISOString(),
    page_query: { page_size: 100 },
  });
  const one = (name: string, p: string, body: unknown): Scenario => ({
    name,
    path: p,
    headers,
    bodies: [JSON.stringify(body)],
  });
  // A later page only where the list has more than one.
  const laterPage = (name: string, p: string, body: object, at: { token: string; index: number }) =>
    at.index === 0
      ? []
      : [
          one(`${name}, page ${at.index + 1} by page token`, p, {
            ...body,
            page_query: { page_size: 100, page_token: at.token },
          }),
        ];

  const listPage1 = one('list-unhealthy-tests, page 1 (100 of FLAKY)', listPath, {
    ...listBody,
    page_query: { page_size: 100 },
  });
  const coldDetails: Scenario = {
    name: `get-test-details, cold tests (${main.coldTestIds.length} in turn)`,
    path: `${flaky}/get-test-details`,
    headers,
    bodies: main.coldTestIds.map((id) => JSON.stringify({ ...scope, test_id: id })),
  };
  const quarantined1 = one('list-quarantined-tests, page 1 (100)', quarantinedPath, {
    ...scope,
    page_query: { page_size: 100 },
  });
  const quarantineAll = one(
    'getQuarantineConfig, no identifiers (all quarantined ids)',
    `${API}/metrics/getQuarantineConfig`,
    { repo: main.repo, orgUrlSlug: main.orgSlug },
  );
  const listRepos = one('repositories/list, page 1', `${API}/repositories/list`, {
    org_url_slug: main.orgSlug,
    page_query: { page_size: 100 },
  });
  const queueReads = queue === undefined ? [] : await queueScenarios(server, headers, queue);
  const scenarios: Scenario[] = [
    listPage1,
    ...laterPage('list-unhealthy-tests', listPath, listBody, later),
    one(`get-test-details, hot test (${main.hotResults} results)`, `${flaky}/get-test-details`, {
      ...scope,
      test_id: main.hotTestId,
    }),
    coldDetails,
    quarantined1,
    ...laterPage('list-quarantined-tests', quarantinedPath, scope, laterQuarantined),
    one('list-failing-tests, 24 h window, page 1 (100)', `${flaky}/list-failing-tests`, failing(1)),
    one('list-failing-tests, 7-day window, page 1 (100)', `${flaky}/list-failing-tests`, failing(7)),
    one('get-repository-settings', `${flaky}/get-repository-settings`, scope),
    quarantineAll,
    one(`getQuarantineConfig, ${identifiers.length} test identifiers`, `${API}/metrics/getQuarantineConfig`, {
      repo: main.repo,
      orgUrlSlug: main.orgSlug,
      testIdentifiers: identifiers,
    }),
    one('repositories/get', `${API}/repositories/get`, scope),
    listRepos,
    ...queueReads,
  ];
  // The soak's mix: the common reads (list-failing-tests is left out: at scale its aggregation
  // dominates any mix it is in, and its figures are in the tables).
  const soakMix = [listPage1, coldDetails, quarantined1, quarantineAll, ...queueReads.slice(0, 2), listRepos];
  return { scenarios, soakMix, listUnhealthy: listPage1, later };
}

async function engineParts(engine: Engine, params: Params, shape: Shape): Promise<EngineReads> {
  const seeded = await ensureSeeded(engine, params, shape);
  const main = seeded.meta.main;
  // The day shape is for the reads only: no merge queue, no contention, no soak on it.
  const readsHere = shape === 'day' ? params.parts.includes('day') : params.parts.includes('reads');
  const spread = shape === 'spread';
  log(
    `reads ${engine} (${shape}): ${seeded.cached ? 'reusing' : 'seeded'} ${main.cases} test cases, ${main.results} results` +
      ` (+ ${seeded.meta.other.cases} / ${seeded.meta.other.results} in a second organization)`,
  );
  // The seeded database of an older bench version may hold snapshots: the copy starts without them.
  await clearSnapshots(seeded);
  const scratch = await scratchCopy(seeded, params);
  const gitRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-bench-git-'));
  const target = { engine, location: scratch.location };
  try {
    const identifiers = await testIdentifiers(target, main);
    const server = await startMainline(scratch.location, { gitRoot });
    let built: Built;
    let queue: SeededQueue | undefined;
    let queueProblem: string | undefined;
    const results: LoadResult[] = [];
    let snapshotRows = 0;
    let contention: ContentionReport | undefined;
    const soakHere =
      spread && params.parts.includes('soak') && params.soakSeconds > 0 && params.soakEngine === engine;
    let answers: Awaited<ReturnType<typeof captureAnswers>> = [];
    try {
      if ((spread && params.parts.includes('reads')) || soakHere) {
        log(`reads ${engine}: seeding a merge queue with ${params.queuePrs} PRs through the API`);
        try {
          queue = await seedQueue(server.url, main.token, params.queuePrs);
          log(
            `reads ${engine}: queue seeded in ${queue.seconds.toFixed(0)} s: ` +
              Object.entries(queue.states)
                .map(([s, n]) => `${n} ${s}`)
                .join(', '),
          );
        } catch (error) {
          queueProblem = (error as Error).message.split('\n')[0] ?? 'unknown error';
          log(`WARNING: reads ${engine}: no merge queue, so no queue reads: ${queueProblem}`);
        }
      }
      built = await buildScenarios(server, seeded, identifiers, queue);
      if (readsHere) {
        for (const s of built.scenarios) {
          await check(server.url, s);
          log(`reads ${engine} (${shape}): ${s.name}`);
          results.push(await measure(server.url, s, params));
        }
        // The answers as they are now (list snapshots taken), for the same-bytes baseline.
        if (params.sameBytes) answers = await captureAnswers(server.url, built.scenarios);
        results.push(...(await measureDashboard(server.url, main, params)));
        snapshotRows = await clearSnapshots(target);
      }
      if (spread && params.parts.includes('contention')) {
        contention = await measureContention(engine, server, main.token, built.listUnhealthy, params);
      }
    } finally {
      await server.stop();
    }
    if (answers.length > 0) {
      const same = await measureSameBytes(answers, built.scenarios, params, `reads ${engine} (${shape})`);
      for (let i = 0; i < results.length; i++) {
        const r = results[i] as LoadResult;
        const s = built.scenarios.find((x) => x.name === r.name);
        if (s !== undefined) results[i] = { ...r, same: same.get(r.name), bytes: meanBytes(answers, s) };
      }
    }
    let soak: SoakReport | undefined;
    if (soakHere) {
      const soakServer = await startMainline(scratch.location, { gitRoot });
      try {
        soak = await runSoak(engine, soakServer, main.token, built.soakMix, params);
      } finally {
        await soakServer.stop();
      }
    }
    return {
      engine,
      shape,
      seeded,
      copySeconds: scratch.copySeconds,
      results,
      snapshotRows,
      laterPage: built.later.index,
      totalUnhealthy: built.later.total,
      queue,
      queueProblem,
      contention,
      soak,
    };
  } finally {
    await scratch.drop();
    fs.rmSync(gitRoot, { recursive: true, force: true });
  }
}

export async function measureBaseline(params: Params): Promise<LoadResult> {
  const baseline = await startBaseline();
  try {
    log('reads: bare Fastify baseline');
    return await measure(
      baseline.url,
      {
        name: 'bare Fastify POST, small JSON (baseline)',
        path: '/baseline',
        headers: { 'content-type': 'application/json', 'x-api-token': 'ml_x' },
        bodies: [
          JSON.stringify({ repo: { host: 'github.com', owner: 'acme', name: 'web' }, org_url_slug: 'bench' }),
        ],
      },
      params,
    );
  } finally {
    await baseline.stop();
  }
}

/**
 * The parts on the seeded databases, engine by engine: reads, contention and soak on the 30-day
 * spread, then the reads on the one-day shape (part day).
 */
export async function runReads(params: Params, engines: Engine[]): Promise<ReadsReport> {
  const { parts } = params;
  const baseline =
    parts.includes('reads') || parts.includes('day') ? await measureBaseline(params) : undefined;
  const out: EngineReads[] = [];
  if (parts.some((p) => p === 'reads' || p === 'contention' || p === 'soak'))
    for (const engine of engines) out.push(await engineParts(engine, params, 'spread'));
  const day: EngineReads[] = [];
  if (parts.includes('day')) for (const engine of engines) day.push(await engineParts(engine, params, 'day'));
  return { baseline, engines: out, day };
}
