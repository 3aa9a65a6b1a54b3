// Read latency at scale: the flaky-tests endpoints of the real server on a seeded database, against
// a bare Fastify endpoint measured in the same run.
import { type Engine, log, type Params } from './common.ts';
import { measureDashboard } from './dashboard.ts';
import { type LoadResult, measure, post, type Scenario } from './load.ts';
import { clearSnapshots, ensureSeeded, type Seeded } from './seed.ts';
import { startBaseline, startMainline } from './server.ts';

export interface EngineReads {
  readonly engine: Engine;
  readonly seeded: Seeded;
  readonly results: LoadResult[];
  /** Snapshot rows the list endpoint wrote during the run (page 1 of a multi-page list freezes its order). */
  readonly snapshotRows: number;
  /** Which page the "later page" scenario reads (0-based). */
  readonly laterPage: number;
  readonly totalUnhealthy: number;
}

export interface ReadsReport {
  readonly baseline: LoadResult;
  readonly engines: EngineReads[];
}

const LATER_PAGE = 9;

interface PageAnswer {
  tests?: unknown[];
  page?: { next_page_token: string; total_rows: number; page_index: number };
}

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
    if (res.status !== 200)
      throw new Error(`list-unhealthy-tests answered ${res.status}: ${res.text.slice(0, 300)}`);
    const page = (JSON.parse(res.text) as PageAnswer).page;
    if (page === undefined || page.next_page_token === '') break;
    token = page.next_page_token;
    index = page.page_index + 1;
    total = page.total_rows;
  }
  return { token, index, total };
}

async function check(url: string, s: Scenario): Promise<void> {
  const res = await post(url + s.path, s.headers, s.bodies[0] ?? '');
  if (res.status !== 200) {
    log(`WARNING: ${s.name} answered ${res.status}: ${res.text.slice(0, 300)}`);
  }
}

async function engineReads(engine: Engine, params: Params): Promise<EngineReads> {
  const seeded = await ensureSeeded(engine, params);
  const main = seeded.meta.main;
  log(
    `reads ${engine}: ${seeded.cached ? 'reusing' : 'seeded'} ${main.cases} test cases, ${main.results} results` +
      ` (+ ${seeded.meta.other.cases} / ${seeded.meta.other.results} in a second organization)`,
  );
  await clearSnapshots(seeded);
  const server = await startMainline(seeded.location);
  try {
    const headers = { 'content-type': 'application/json', 'x-api-token': main.token };
    const scope = { repo: main.repo, org_url_slug: main.orgSlug };
    const listPath = '/v1/flaky-tests/list-unhealthy-tests';
    const detailsPath = '/v1/flaky-tests/get-test-details';
    const listBody = { ...scope, status: 'FLAKY' };
    const later = await laterPageToken(server.url + listPath, headers, listBody);
    const scenarios: Scenario[] = [
      {
        name: 'list-unhealthy-tests, page 1 (100 of FLAKY)',
        path: listPath,
        headers,
        bodies: [JSON.stringify({ ...listBody, page_query: { page_size: 100 } })],
      },
      {
        name: `list-unhealthy-tests, page ${later.index + 1} by page token`,
        path: listPath,
        headers,
        bodies: [JSON.stringify({ ...listBody, page_query: { page_size: 100, page_token: later.token } })],
      },
      {
        name: `get-test-details, hot test (${main.hotResults} results)`,
        path: detailsPath,
        headers,
        bodies: [JSON.stringify({ ...scope, test_id: main.hotTestId })],
      },
      {
        name: `get-test-details, cold tests (${main.coldTestIds.length} in turn)`,
        path: detailsPath,
        headers,
        bodies: main.coldTestIds.map((id) => JSON.stringify({ ...scope, test_id: id })),
      },
    ];
    const results: LoadResult[] = [];
    for (const s of scenarios) {
      await check(server.url, s);
      log(`reads ${engine}: ${s.name}`);
      results.push(await measure(server.url, s, params));
    }
    results.push(...(await measureDashboard(server.url, main, params)));
    const snapshotRows = await clearSnapshots(seeded);
    return { engine, seeded, results, snapshotRows, laterPage: later.index, totalUnhealthy: later.total };
  } finally {
    await server.stop();
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

export async function runReads(params: Params, engines: Engine[]): Promise<ReadsReport> {
  const baseline = await measureBaseline(params);
  const out: EngineReads[] = [];
  for (const engine of engines) out.push(await engineReads(engine, params));
  return { baseline, engines: out };
}
