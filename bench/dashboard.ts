// Server render time of the dashboard's pages on the seeded database: signed in once, then each page
// requested one at a time by the same child-process loop as the "seq" columns of the API reads
// (sequential.ts; no autocannon run). Then some of them right after each of a series of small uploads
// (dashboard-upload.ts): the first view of a page once new results have arrived.
import http from 'node:http';
import type { Params } from './common.ts';
import { AFTER_UPLOAD, measureAfterUpload, pageResult, uploadedFailure } from './dashboard-upload.ts';
import type { LoadResult } from './load.ts';
import type { SeededRepo } from './seed.ts';
import { runSequential } from './sequential.ts';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function request(url: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; cookie: string | undefined }>((resolve, reject) => {
    const req = http.request(url, { method: body === undefined ? 'GET' : 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, cookie: res.headers['set-cookie']?.[0]?.split(';')[0] }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function measureDashboard(
  base: string,
  main: SeededRepo,
  params: Params,
): Promise<LoadResult[]> {
  const form = `token=${encodeURIComponent(main.token)}`;
  const login = await request(`${base}/login`, { 'content-type': 'application/x-www-form-urlencoded' }, form);
  if (login.status !== 303 || login.cookie === undefined)
    throw new Error(`dashboard sign-in answered ${login.status}`);
  const headers = { cookie: login.cookie };
  const repo = `/${main.orgSlug}/repos/${main.repo.host}/${main.repo.owner}/${main.repo.name}`;
  const pages = [
    { name: 'dashboard: test page, hot test', paths: [`${repo}/tests/${main.hotTestId}`] },
    {
      name: `dashboard: test page, cold tests (${main.coldTestIds.length} in turn)`,
      paths: main.coldTestIds.map((id) => `${repo}/tests/${id}`),
    },
    { name: 'dashboard: unhealthy tests, page 1', paths: [repo] },
    {
      name: 'dashboard: unhealthy tests, FLAKY by name, page 10',
      paths: [`${repo}?show=flaky&sort=name&page=10`],
    },
    {
      name: 'dashboard: unhealthy tests, name search + code owner',
      paths: [`${repo}?q=handles&owner=%40acme%2Fteam-3`],
    },
    { name: 'dashboard: repositories overview', paths: [`/${main.orgSlug}`] },
    { name: 'dashboard: failing tests, page 1', paths: [`${repo}/failing`] },
    { name: 'dashboard: failing tests, 7 days, page 3', paths: [`${repo}/failing?window=7d&page=3`] },
    { name: 'dashboard: all tests, page 1', paths: [`${repo}/tests`] },
    { name: 'dashboard: all tests, name search', paths: [`${repo}/tests?q=handles`] },
    // A search that matches nothing reads every test's texts and returns no row.
    { name: 'dashboard: all tests, name search, no match', paths: [`${repo}/tests?q=no-such-test`] },
    {
      name: 'dashboard: all tests, name search + code owner',
      paths: [`${repo}/tests?q=handles&owner=%40acme%2Fteam-3`],
    },
    { name: 'dashboard: durations (slowest tests, 30 days)', paths: [`${repo}/durations`] },
  ];
  const out: LoadResult[] = [];
  for (const p of pages) {
    const { seq, failed } = await runSequential(
      p.name,
      p.paths.map((path) => ({ url: base + path, method: 'GET' as const, headers })),
      params.sequential,
      params.duration,
    );
    out.push(pageResult(p.name, seq, failed));
  }
  // Last: their uploads change what the pages above show.
  const after = AFTER_UPLOAD;
  const afterUpload = [
    { name: `dashboard: failing tests, page 1${after}`, path: () => `${repo}/failing` },
    {
      name: `dashboard: failing tests, 7 days, page 3${after}`,
      path: () => `${repo}/failing?window=7d&page=3`,
    },
    {
      name: `dashboard: all tests, name search + code owner${after}`,
      path: () => `${repo}/tests?q=handles&owner=%40acme%2Fteam-3`,
    },
    { name: `dashboard: unhealthy tests, page 1${after}`, path: () => repo },
    { name: `dashboard: repositories overview${after}`, path: () => `/${main.orgSlug}` },
    {
      name: `dashboard: test page of a test that failed in the upload${after}`,
      path: (failed: readonly string[]) => `${repo}/tests/${failed[0]}`,
      shows: uploadedFailure,
    },
  ];
  out.push(...(await measureAfterUpload(base, main, headers, afterUpload, params)));
  return out;
}
