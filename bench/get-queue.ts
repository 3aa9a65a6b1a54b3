// getQueue with N PRs queued (BENCH_GETQUEUE_PRS, default 1000; numbered 40,007 + 7n as a forge would),
// one request at a time over loopback HTTP, on the plain-git forge, the GitHub forge and the GitLab forge
// (their simulators), each queue with its flake protection unset so every getQueue asks the forge for
// `.mainline.yaml`'s setting (the path issue 26 measured). MAINLINE_KEPT_QUEUES and
// MAINLINE_FORGE_SETTINGS_CACHE, when set, reach the app (0: an A/B without the kept answers or the forge
// settings memo).
// The queues are created through the API; their PRs are submitted to the engine through applyEvent (the
// store path every submission takes) rather than opened one by one on a forge, which only the seeding needs.
// Database: SQLite file, or PostgreSQL when DATABASE_URL is set. Prints p50/p99 of the wall-clock time
// per forge and the server thread's CPU time per request. The client is bench/seq-client.mjs, a process
// of its own that discards the bytes as they arrive (as the read tables' one-at-a-time loop): a client
// that decodes each 325 KiB answer to a string collects its own heap every ~10 requests (mark-compact:
// the strings are large objects), and those pauses, not the server, made the p99 of 6–12 ms of ours and of
// the same-bytes route alike. That client (a worker thread of this process, fetch and text()) is still
// measured and printed beside it.
//   node --import tsx bench/get-queue.ts            (BENCH_GETQUEUE_REQUESTS, default 2000, after 200 warm-up)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { grantOwner } from '../src/app/forge-grants.ts';
import { grantNamespace } from '../src/app/gitlab/grants.ts';
import { applyEvent } from '../src/app/queue/apply.ts';
import { GitLabSimulator } from '../src/demo/gitlab-sim/simulator.ts';
import { GitRepositoryForge } from '../src/forge/git-repository-forge.ts';
import { GitHubForge } from '../src/forge/github/index.ts';
import { GitLabForge } from '../src/forge/gitlab/forge.ts';
import { RoutingForge } from '../src/forge/router.ts';
import { repoIsGranted } from '../src/store/forge/grants.ts';
import { buildTestApp } from '../test/support/app.ts';
import { startGitHubSimulator } from '../test/support/github-sim/index.ts';
import { forgePrNumber } from './queue-sim.ts';
import { sequentialLoop } from './sequential.ts';

const PRS = Number(process.env['BENCH_GETQUEUE_PRS'] ?? 1000);
const REQUESTS = Number(process.env['BENCH_GETQUEUE_REQUESTS'] ?? 2000);
const WARMUP = 200;
const YAML = 'merge:\n  required_statuses: [ci]\n';
const GIT_REPO = { host: 'git.local', owner: 'acme', name: 'queue' };
const GH_REPO = { host: 'github.com', owner: 'acme', name: 'widgets' };
const GL_REPO = { host: 'gitlab.com', owner: 'acme', name: 'service' };
const silent = { info() {}, warn() {}, error() {} };

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-bench-getqueue-'));
const sim = await startGitHubSimulator({ webhookSecret: 'bench', token: 'ghp_simulated' });
await sim.createRepo(GH_REPO.owner, GH_REPO.name, {
  defaultBranch: 'main',
  files: { 'README.md': 'hello\n', '.mainline.yaml': YAML },
});
const gl = await GitLabSimulator.start({ token: 'glpat-simulated', webhookSecret: 'bench' });
await gl.createProject(`${GL_REPO.owner}/${GL_REPO.name}`, {
  files: { 'README.md': 'hello\n', '.mainline.yaml': YAML },
});
const passed = Object.fromEntries(
  ['MAINLINE_KEPT_QUEUES', 'MAINLINE_FORGE_SETTINGS_CACHE'].flatMap((k) => {
    const v = process.env[k];
    return v === undefined ? [] : [[k, v]];
  }),
);
const t = await buildTestApp(
  {
    MAINLINE_GIT_ROOT: path.join(root, 'repos'),
    MAINLINE_GITHUB_TOKEN: 'ghp_simulated',
    MAINLINE_GITHUB_API_URL: sim.url,
    MAINLINE_GITHUB_HOST: 'github.com',
    MAINLINE_GITHUB_WEBHOOK_SECRET: 'bench',
    MAINLINE_GITLAB_URL: gl.url,
    MAINLINE_GITLAB_HOST: 'gitlab.com',
    MAINLINE_GITLAB_TOKEN: 'glpat-simulated',
    MAINLINE_GITLAB_WEBHOOK_SECRET: 'bench',
    ...passed,
  },
  {
    forge: (config, db) =>
      new RoutingForge(
        new GitRepositoryForge({ root: config.gitRoot, db: db.database.db, now: Date.now }),
        new GitHubForge({
          client: {
            baseUrl: sim.url,
            auth: { kind: 'token', token: 'ghp_simulated' },
            log: silent,
            retryAfterBaseMs: 1,
            writeIntervalMs: 0,
          },
        }),
        'github.com',
        (repo) => repoIsGranted(db.database.db, repo.id),
        {
          forge: new GitLabForge({
            client: { baseUrl: gl.url, token: 'glpat-simulated', log: silent, retryBaseMs: 1 },
            mirrorRoot: path.join(config.gitRoot, '.gitlab'),
            remoteUrl: (repo) => gl.remote(`${repo.owner}/${repo.name}`),
          }),
          host: 'gitlab.com',
        },
      ),
  },
);
const db = t.db.database.db;
const token = await t.token('acme');
await grantOwner(db, { orgSlug: 'acme', host: 'github.com', owner: GH_REPO.owner, now: Date.now() });
await grantNamespace(db, { orgSlug: 'acme', host: 'gitlab.com', namespace: GL_REPO.owner, now: Date.now() });

async function post(url: string, body: unknown) {
  const res = await t.post(url, body, token);
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

// The plain-git repository: main holds .mainline.yaml, pushed with the git CLI as a user would.
const bare: string = (await post('/v1/git/createRepository', { repo: GIT_REPO })).path;
const work = path.join(root, 'work');
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@x',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@x',
};
const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: work, env, stdio: 'pipe' }).toString().trim();
execFileSync('git', ['clone', '-q', bare, work], { env, stdio: 'pipe' });
fs.writeFileSync(path.join(work, '.mainline.yaml'), YAML);
git('checkout', '-q', '-b', 'main');
git('add', '.');
git('commit', '-q', '-m', 'initial');
git('push', '-q', 'origin', 'main');
const base = git('rev-parse', 'HEAD');

async function seed(repo: typeof GIT_REPO): Promise<void> {
  await post('/v1/createQueue', { repo, targetBranch: 'main' });
  // Paused, so the PRs stay queued (nothing runs them); getQueue lists them all the same.
  await post('/v1/updateQueue', { repo, targetBranch: 'main', state: 'paused' });
  const row = await db
    .selectFrom('merge_queues')
    .innerJoin('repositories', 'repositories.id', 'merge_queues.repo_id')
    .select('merge_queues.id')
    .where('repositories.name', '=', repo.name)
    .executeTakeFirstOrThrow();
  for (let i = 1; i <= PRS; i++) {
    const n = forgePrNumber(i);
    const pr = {
      number: n,
      title: `Change ${n}`,
      author: 'bench-bot',
      headSha: n.toString(16).padStart(40, 'a'),
      baseSha: base,
      baseBranch: 'main',
      mergeability: 'mergeable' as const,
    };
    await applyEvent({ db, caches: t.caches }, row.id, { type: 'pr_submitted', pr }, Date.now());
  }
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

await t.app.listen({ host: '127.0.0.1', port: 0 });
const port = (t.app.server.address() as AddressInfo).port;

// The client runs in a worker thread, a heap of its own, as a real client runs elsewhere: decoding
// 1,000 answers of 321 KiB would otherwise fill the server's heap and its collections would be timed
// as the server's.
const CLIENT = `
const { parentPort, workerData: w } = require('node:worker_threads');
(async () => {
  const times = [];
  let bytes = 0;
  let listed = 0;
  for (let i = 0; i < w.n; i++) {
    const started = performance.now();
    const res = await fetch(w.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': w.token },
      body: w.body,
    });
    const text = await res.text();
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error('getQueue: ' + res.status + ' ' + text);
    if (i === 0) listed = JSON.parse(text).enqueuedPullRequests.length;
    bytes = text.length;
  }
  parentPort.postMessage({ times, bytes, listed });
})();
`;

function client(
  body: string,
  n: number,
  url = `http://127.0.0.1:${port}/v1/getQueue`,
): Promise<{ times: number[]; bytes: number; listed: number }> {
  const worker = new Worker(CLIENT, { eval: true, workerData: { url, token, body, n } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: { times: number[]; bytes: number; listed: number }) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** `n` requests after `warmup`, one at a time from seq-client.mjs: sorted wall times (ms). */
async function seqClient(
  body: string,
  n: number,
  warmup: number,
  url = `http://127.0.0.1:${port}/v1/getQueue`,
): Promise<number[]> {
  const request = {
    url,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', 'x-api-token': token },
    body,
  };
  const { times, failed } = await sequentialLoop([request], n, warmup, 600_000);
  if (failed > 0) throw new Error(`getQueue: ${failed} of ${n} answers were not 2xx`);
  return times.sort((a, b) => a - b);
}

const out: string[] = [];
for (const [label, repo] of [
  ['plain git', GIT_REPO],
  ['GitHub (simulator)', GH_REPO],
  ['GitLab (simulator)', GL_REPO],
] as const) {
  await seed(repo);
  const body = JSON.stringify({ repo, targetBranch: 'main' });
  await seqClient(body, WARMUP, 0);
  // This thread's CPU time (the server, and the simulators answering the forge calls) over the
  // measured requests: what a request costs whatever the machine's load, where the wall-clock tail
  // on a shared machine is mostly waiting for a core.
  const cpuBefore = process.threadCpuUsage();
  const times = await seqClient(body, REQUESTS, 0);
  const cpu = process.threadCpuUsage(cpuBefore);
  const decoding = await client(body, REQUESTS);
  const { bytes, listed } = decoding;
  const decoded = decoding.times.sort((a, b) => a - b);
  // The limit for this read: a bare Fastify route in this same thread answering the same bytes from
  // memory to the same client (it pays HTTP, parsing the request body and writing 321 KiB), measured
  // right after; what both share (the client worker decoding each answer, the machine) is not ours.
  const answer = await fetch(`http://127.0.0.1:${port}/v1/getQueue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': token },
    body,
  });
  const same = await sameBytesTimes(Buffer.from(await answer.arrayBuffer()), body);
  out.push(
    `${label}: ${listed} PRs listed, ${Math.round(bytes / 1024)} KiB; p50 ${pct(times, 0.5).toFixed(2)} ms, p99 ${pct(times, 0.99).toFixed(2)} ms, max ${times.at(-1)?.toFixed(2)} ms; server thread CPU ${((cpu.user + cpu.system) / 1000 / REQUESTS).toFixed(2)} ms per request; over ${REQUESTS} requests (${t.db.env['DATABASE_URL']?.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'}); same-bytes route p50 ${pct(same.times, 0.5).toFixed(2)} ms, p99 ${pct(same.times, 0.99).toFixed(2)} ms (p99 ratio ${(pct(times, 0.99) / pct(same.times, 0.99)).toFixed(2)}); a client decoding each answer to a string (worker thread, fetch): p50 ${pct(decoded, 0.5).toFixed(2)} ms, p99 ${pct(decoded, 0.99).toFixed(2)} ms, same-bytes route p99 ${pct(same.decoded, 0.99).toFixed(2)} ms`,
  );
}

/** The same clients against a bare route serving `bytes` for every request: sorted wall times. */
async function sameBytesTimes(bytes: Buffer, body: string): Promise<{ times: number[]; decoded: number[] }> {
  const bare = Fastify({ logger: false });
  bare.post('/v1/getQueue', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(bytes),
  );
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/v1/getQueue`;
  await seqClient(body, WARMUP, 0, url);
  const times = await seqClient(body, REQUESTS, 0, url);
  const decoded = (await client(body, REQUESTS, url)).times.sort((a, b) => a - b);
  await bare.close();
  return { times, decoded };
}
console.log(out.join('\n'));
await t.close();
await sim.close();
await gl.close();
fs.rmSync(root, { recursive: true, force: true });
