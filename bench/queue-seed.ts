// A merge queue for the queue reads, built through the running bench server's HTTP API and the git
// CLI, as a user and their CI would (no SQL): a plain-git repository `git.local/acme/queue` in the
// bench organization, N pull requests (one new file each, so none conflicts) submitted to a queue on
// main (single mode, concurrency 5, required status "bench"), and a CI stand-in that reports the
// status of the runs of the first half of the PRs (every 8th PR fails its own run), so those leave
// the queue (merged or failed) and the rest stays: five testing, the others pending. Runs on the
// scratch copy only.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiError, DemoApi } from '../src/demo/api.ts';
import { git } from '../src/demo/git.ts';
import { Workspace } from '../src/demo/repo-script.ts';
import { log, sleep } from './common.ts';

export const QUEUE_REPO = { host: 'git.local', owner: 'acme', name: 'queue' } as const;
export const QUEUE_BRANCH = 'main';
const STATUS = 'bench';
const TEST_BRANCH_PREFIX = 'mainline-merge';
const AUTHOR = { login: 'bench-bot', name: 'Bench Bot' };
const CONCURRENCY = 5;
/** How long the queue may take to get half its PRs out. */
const DEADLINE_MS = 180_000;

export interface SeededQueue {
  readonly repo: typeof QUEUE_REPO;
  readonly targetBranch: string;
  /** Every PR submitted. */
  readonly prNumbers: number[];
  /** Every test run seen (finished runs are read from the queue's archive). */
  readonly runIds: string[];
  /** PRs per state when the seeding stopped. */
  readonly states: Record<string, number>;
  readonly seconds: number;
}

interface TestingDetails {
  testBranchSha: string;
  status?: string;
  testedPullRequests: { prNumber: number }[];
}

interface PrRecord {
  state?: string;
  prNumber: number;
}

const bad = (n: number) => n % 8 === 4;

async function states(api: DemoApi): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let cursor: string | undefined;
  for (;;) {
    const page = await api.post<{ pullRequests: PrRecord[]; nextCursor?: string }>('listPullRequests', {
      repo: QUEUE_REPO,
      targetBranch: QUEUE_BRANCH,
      take: 100,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const pr of page.pullRequests) out[pr.state ?? 'unknown'] = (out[pr.state ?? 'unknown'] ?? 0) + 1;
    if (page.nextCursor === undefined) return out;
    cursor = page.nextCursor;
  }
}

/** Test branches now in the bare repository: test run id → head commit. */
async function testBranches(gitDir: string): Promise<Map<string, string>> {
  const refs = await git([
    '--git-dir',
    gitDir,
    'for-each-ref',
    '--format=%(objectname) %(refname)',
    `refs/heads/${TEST_BRANCH_PREFIX}`,
  ]);
  const out = new Map<string, string>();
  for (const line of refs.split('\n')) {
    const [sha, ref] = line.split(' ');
    if (sha === undefined || ref === undefined) continue;
    // refs/heads/mainline-merge/pr-<n>/<testRunId>
    const runId = ref.split('/').slice(4).join('/');
    if (runId !== '') out.set(runId, sha);
  }
  return out;
}

/** Builds the queue on the server at `url` (organization of `token`); `prs` pull requests. */
export async function seedQueue(url: string, token: string, prs: number): Promise<SeededQueue> {
  const t0 = performance.now();
  const api = new DemoApi(url, token);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-bench-queue-'));
  try {
    const { path: gitDir } = await api.post<{ path: string }>('git/createRepository', { repo: QUEUE_REPO });
    const ws = await Workspace.create(work, gitDir);
    const base = await ws.commit({ 'README.md': '# queue bench\n' }, 'Initial commit', AUTHOR);
    const numbers = Array.from({ length: prs }, (_, i) => i + 1);
    const heads = new Map<number, string>();
    for (const n of numbers) {
      await ws.checkout(`pr-${n}`, base);
      heads.set(
        n,
        await ws.commit({ [`changes/pr-${n}.txt`]: `change ${n}\n` }, `Bench change ${n}`, AUTHOR),
      );
    }
    await ws.push(['main', ...numbers.map((n) => `pr-${n}`)]);
    for (const n of numbers) {
      await api.post('git/registerPullRequest', {
        repo: QUEUE_REPO,
        number: n,
        title: `Bench change ${n}`,
        author: AUTHOR.login,
        headBranch: `pr-${n}`,
        baseBranch: QUEUE_BRANCH,
      });
    }
    try {
      await api.post('createQueue', {
        repo: QUEUE_REPO,
        targetBranch: QUEUE_BRANCH,
        mode: 'single',
        concurrency: CONCURRENCY,
      });
    } catch (error) {
      // A scratch copy never has one; a rerun on the same copy would.
      if (!(error instanceof ApiError && error.status === 409)) throw error;
    }
    await api.post('updateQueue', {
      repo: QUEUE_REPO,
      targetBranch: QUEUE_BRANCH,
      directMergeMode: 'off',
      requiredStatuses: [STATUS],
      testingTimeoutMinutes: 24 * 60,
    });
    for (const n of numbers) {
      // The PR's own CI passed on its head: the queue admits only such PRs.
      const sha = heads.get(n) as string;
      await api.post('git/reportStatus', { repo: QUEUE_REPO, sha, context: STATUS, state: 'success' });
      await api.post('submitPullRequest', {
        repo: QUEUE_REPO,
        targetBranch: QUEUE_BRANCH,
        pr: { number: n },
      });
    }

    // The CI stand-in: report each run's status once its test branch is built.
    const reported = new Set<string>();
    const runIds = new Set<string>();
    const target = Math.floor(prs / 2);
    const deadline = Date.now() + DEADLINE_MS;
    let now = await states(api);
    const finished = (s: Record<string, number>) => (s['merged'] ?? 0) + (s['failed'] ?? 0);
    while (finished(now) < target && Date.now() < deadline) {
      for (const [runId, sha] of await testBranches(gitDir)) {
        runIds.add(runId);
        if (reported.has(`${runId}@${sha}`)) continue;
        const d = await api.post<TestingDetails>('getMergeQueueTestingDetails', {
          repo: QUEUE_REPO,
          targetBranch: QUEUE_BRANCH,
          testRunId: runId,
        });
        if (d.status !== 'in_progress') {
          reported.add(`${runId}@${sha}`);
          continue;
        }
        if (d.testBranchSha !== sha) continue; // still being (re)built
        const own = d.testedPullRequests.at(-1)?.prNumber ?? 0;
        if (own > target) continue; // left testing for the reads
        await api.post('git/reportStatus', {
          repo: QUEUE_REPO,
          sha,
          context: STATUS,
          state: bad(own) ? 'failure' : 'success',
        });
        reported.add(`${runId}@${sha}`);
      }
      await sleep(200);
      now = await states(api);
    }
    if (finished(now) < target)
      log(`WARNING: queue seed: only ${finished(now)} of ${target} PRs left the queue in time`);
    // Let the runner start the runs of what is left, so some PRs are testing when the reads start.
    const settle = Date.now() + 15_000;
    while ((now['testing'] ?? 0) === 0 && Date.now() < settle) {
      await sleep(250);
      now = await states(api);
    }
    for (const runId of (await testBranches(gitDir)).keys()) runIds.add(runId);
    return {
      repo: QUEUE_REPO,
      targetBranch: QUEUE_BRANCH,
      prNumbers: numbers,
      runIds: [...runIds],
      states: now,
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
