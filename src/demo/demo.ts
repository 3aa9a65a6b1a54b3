/**
 * `mainline demo`: a server on a fresh SQLite folder with a local git repository, a handful of pull
 * requests run through the merge queue by a built-in CI, and their test results uploaded, so that
 * every endpoint has real data to show. Everything after the server start goes through the HTTP API
 * on loopback and the git CLI, as a user and their CI would.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { RepoRef } from '../app/repositories.ts';
import { type Config, loadConfig } from '../config.ts';
import { type Server, startServer } from '../main.ts';
import { DemoApi } from './api.ts';
import { describeRun, LocalCi, type TestingDetails } from './local-ci.ts';
import { HISTORY, PULL_REQUESTS, Workspace } from './repo-script.ts';

export const DEMO_ORG = 'demo';
export const DEMO_REPO: RepoRef = { host: 'git.local', owner: 'demo', name: 'shop' };
const TARGET = 'main';
const QUEUE_POLL_MS = 200;
const WATCH_MS = 250;

export interface DemoOptions {
  /** TCP port on 127.0.0.1 (default 8080); 0 picks a free one. */
  readonly port?: number;
  /** Folder for the database, the git repositories and the CI's reports; default a new temporary folder, removed on close. */
  readonly dataDir?: string;
  /** Seconds the scenario may take before it counts as failed (default 90). */
  readonly timeoutSeconds?: number;
  /** The server's own log level (JSON lines on stdout); default warn. */
  readonly logLevel?: Config['logLevel'];
  /** Receives the progress lines. */
  readonly log?: (line: string) => void;
  /** Aborting stops the scenario, closes the server and rejects. */
  readonly signal?: AbortSignal;
}

export interface DemoPrResult {
  readonly number: number;
  readonly title: string;
  readonly branch: string;
  readonly author: string;
  readonly story: string;
  readonly expected: 'merged' | 'failed';
  /** The state in the queue when the scenario ended (merged, failed, … or testing if it timed out). */
  readonly state: string;
  readonly reason: string;
  /** The merge-queue test runs the local CI tested for it, as getMergeQueueTestingDetails reads them now. */
  readonly testRuns: readonly DemoTestRun[];
}

export interface DemoTestRun {
  readonly testRunId: string;
  readonly testBranch: string;
  /** in_progress, succeeded, failed or cancelled */
  readonly status: string;
  readonly failureReason?: string;
}

export interface DemoTest {
  readonly id: string;
  readonly name: string;
  readonly classname: string;
  readonly status: string;
  readonly reason: string;
  readonly quarantined: boolean;
  readonly pullRequestsImpacted: number;
  readonly failureRate7d?: number;
}

export interface DemoSummary {
  /** Every PR ended as expected and the flaky, broken and quarantined lists are non-empty. */
  readonly ok: boolean;
  /** What did not go as expected (empty when ok). */
  readonly problems: readonly string[];
  readonly elapsedMs: number;
  readonly prs: readonly DemoPrResult[];
  readonly flaky: readonly DemoTest[];
  readonly broken: readonly DemoTest[];
  readonly quarantined: readonly { readonly id: string; readonly name: string; readonly status: string }[];
  /** CI jobs run: main history, pull requests and merge-queue test branches. */
  readonly ciJobs: number;
}

export interface Demo {
  readonly url: string;
  readonly token: string;
  readonly org: string;
  readonly repo: RepoRef;
  readonly dataDir: string;
  /** True when dataDir is a temporary folder that close() removes. */
  readonly temporary: boolean;
  /** The bare repository the demo pushes to (clone it to look around). */
  readonly gitRepository: string;
  readonly summary: DemoSummary;
  /** Stops the local CI and the server (in-flight requests finish), and removes a temporary data folder. */
  close(): Promise<void>;
}

/** The part of getSubmittedPullRequest the demo reads. */
interface SubmittedPr {
  state?: string;
  stateReason: string;
  history: { state: string; at: string; reason: string }[];
}

interface UnhealthyTest {
  id: string;
  name: string;
  classname?: string;
  status: { value: string; reason: string };
  quarantined: boolean;
  pull_requests_impacted_last_7d: number;
}

const TERMINAL = new Set(['merged', 'failed', 'cancelled']);
/** Queue states worth a progress line (pending and tests_passed are steps on the way). */
const SHOWN = new Set(['testing', 'pending_failure', 'merged', 'failed', 'cancelled']);

/** A port on 127.0.0.1 nobody listens on right now: the public URL must name the real port. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()));
    });
  });
}

/** The server's configuration: always its own SQLite database in dataDir, whatever DATABASE_URL says. */
export function demoConfig(input: {
  dataDir: string;
  port: number;
  token: string;
  logLevel: Config['logLevel'];
}) {
  return loadConfig(
    {
      HOST: '127.0.0.1',
      PORT: String(input.port),
      MAINLINE_DATA_DIR: input.dataDir,
      MAINLINE_BOOTSTRAP_ORG: DEMO_ORG,
      MAINLINE_BOOTSTRAP_TOKEN: input.token,
      MAINLINE_QUEUE_POLL_MS: String(QUEUE_POLL_MS),
      MAINLINE_SHUTDOWN_TIMEOUT: '5',
      LOG_LEVEL: input.logLevel,
    },
    input.dataDir,
  );
}

async function listen(input: Omit<Parameters<typeof demoConfig>[0], 'port'>, port: number): Promise<Server> {
  if (port !== 0) return startServer(demoConfig({ ...input, port }));
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServer(demoConfig({ ...input, port: await freePort() }));
    } catch (error) {
      // Someone took the free port between the probe and the listen: pick another.
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 3) throw error;
    }
  }
}

/** A given data folder must not hold a database already: the demo builds its scenario from nothing. */
async function prepareDataDir(dir: string): Promise<void> {
  if (existsSync(path.join(dir, 'mainline.db')) || existsSync(path.join(dir, 'git'))) {
    throw new DemoError(
      `${dir} already holds Mainline data; give the demo an empty (or new) folder, or leave out --data-dir`,
    );
  }
  await fs.mkdir(dir, { recursive: true });
}

/** A demo that cannot start (bad folder) or was stopped. */
export class DemoError extends Error {
  override name = 'DemoError';
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= fn();
    return done;
  };
}

/**
 * Runs the whole demo: starts the server, builds the repository and its history, opens the pull
 * requests, runs them through the queue with the local CI, and reads the results back. Resolves when
 * every PR left the queue (or the timeout passed: summary.ok is false then) with the server still
 * running and the CI still watching for new test branches; close() stops both.
 */
export async function runDemo(options: DemoOptions = {}): Promise<Demo> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const deadline = started + (options.timeoutSeconds ?? 90) * 1000;
  const temporary = options.dataDir === undefined;
  const dataDir = temporary
    ? await fs.mkdtemp(path.join(os.tmpdir(), 'mainline-demo-'))
    : path.resolve(options.dataDir as string);
  let server: Server | undefined;
  let scenario: Scenario | undefined;
  const close = once(async () => {
    await scenario?.ci?.stop();
    await server?.close();
    if (temporary) await fs.rm(dataDir, { recursive: true, force: true });
  });
  try {
    if (!temporary) await prepareDataDir(dataDir);
    const token = `ml_${randomBytes(32).toString('base64url')}`;
    server = await listen({ dataDir, token, logLevel: options.logLevel ?? 'warn' }, options.port ?? 8080);
    const url = server.url;
    log(`Mainline demo server at ${url} (organization "${DEMO_ORG}", SQLite in ${dataDir})`);
    const api = new DemoApi(url, token);
    scenario = new Scenario(api, dataDir, log, options.signal);
    const summary = await scenario.run(deadline, started);
    return {
      url,
      token,
      org: DEMO_ORG,
      repo: DEMO_REPO,
      dataDir,
      temporary,
      gitRepository: scenario.gitDir,
      summary,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

class Scenario {
  readonly #api: DemoApi;
  readonly #dataDir: string;
  readonly #log: (line: string) => void;
  readonly #signal: AbortSignal | undefined;
  #gitDir = '';
  #ci: LocalCi | undefined;

  constructor(api: DemoApi, dataDir: string, log: (line: string) => void, signal: AbortSignal | undefined) {
    this.#api = api;
    this.#dataDir = dataDir;
    this.#log = log;
    this.#signal = signal;
  }

  get gitDir(): string {
    return this.#gitDir;
  }

  /** The local CI, once the repository exists. */
  get ci(): LocalCi | undefined {
    return this.#ci;
  }

  #check(): void {
    if (this.#signal?.aborted) throw new DemoError('the demo was stopped');
  }

  async run(deadline: number, started: number): Promise<DemoSummary> {
    const repo = DEMO_REPO;
    const created = await this.#api.post<{ path: string }>('git/createRepository', { repo });
    this.#gitDir = created.path;
    this.#log(
      `✓ created repository ${repo.host}/${repo.owner}/${repo.name} (bare git repository ${created.path})`,
    );
    this.#ci = new LocalCi({
      api: this.#api,
      org: DEMO_ORG,
      repo,
      gitDir: created.path,
      targetBranch: TARGET,
      reportsDir: path.join(this.#dataDir, 'ci-reports'),
      log: this.#log,
      pollMs: 150,
    });
    const ci = this.#ci;

    // No set-up: a new repository's defaults (pass-on-retry flags FLAKY, the default broken-test
    // monitor flags BROKEN a test failing 4 times within an hour, flaky tests are quarantined) find
    // both. The broken test fails all 4 attempts of PR #3's queue run (its own CI does not run it:
    // the invoice tests reached main after PR #3 branched); the flaky test fails once per run with
    // PR #2's change not yet on main (2, at most 3 runs), then passes on the retry, so it stays FLAKY.
    this.#log(
      '✓ test health: the defaults; pass-on-retry flags FLAKY, 4 failures within an hour flag BROKEN',
    );
    this.#check();

    // main's history, pushed, and CI results for each of its commits (dated when they ran).
    const work = await Workspace.create(path.join(this.#dataDir, 'work', repo.name), created.path);
    const history: { sha: string; at: Date }[] = [];
    for (const commit of HISTORY) {
      const at = new Date(Date.now() - commit.daysAgo * 86_400_000);
      history.push({ sha: await work.commit(commit.files, commit.message, commit.author, at), at });
    }
    await work.push([TARGET]);
    let results = 0;
    for (const { sha, at } of history) {
      const r = await ci.test({ kind: 'main', sha, branch: TARGET, ranAt: new Date(at.getTime() + 240_000) });
      results += r.upload.counts.attempts;
    }
    this.#log(
      `✓ pushed ${history.length} commits to ${TARGET} and uploaded their CI results ` +
        `(${history.length} runs, ${results} test results)`,
    );
    this.#check();

    await this.#api.post('createQueue', { repo, targetBranch: TARGET });
    const queue = await this.#api.post<{ requiredStatuses: string[] }>('updateQueue', {
      repo,
      targetBranch: TARGET,
      concurrency: 1,
      directMergeMode: 'off',
    });
    const required = queue.requiredStatuses.length > 0 ? queue.requiredStatuses.join(', ') : 'test';
    this.#log(
      `✓ merge queue on ${TARGET}: one PR at a time, each tested before it merges; ` +
        `required status "${required}" and flake protection from .mainline.yaml`,
    );

    // The pull requests: one branch each off main, pushed together, then registered.
    const heads = new Map<number, string>();
    for (const pr of PULL_REQUESTS) {
      await work.checkout(pr.branch, history.at(-1 - (pr.branchedBack ?? 0))?.sha as string);
      heads.set(pr.number, await work.commit(pr.files, pr.title, pr.author));
    }
    await work.push(PULL_REQUESTS.map((pr) => pr.branch));
    this.#log(`✓ pushed ${PULL_REQUESTS.length} branches`);
    for (const pr of PULL_REQUESTS) {
      this.#check();
      await this.#api.post('git/registerPullRequest', {
        repo,
        number: pr.number,
        title: pr.title,
        author: pr.author.login,
        headBranch: pr.branch,
        baseBranch: TARGET,
      });
      this.#log(`  opened PR #${pr.number} "${pr.title}" by ${pr.author.login} (${pr.branch}): ${pr.story}`);
    }
    this.#check();

    // Pull-request CI on each head, as on every push.
    for (const pr of PULL_REQUESTS) {
      this.#check();
      const r = await ci.test({
        kind: 'pr',
        sha: heads.get(pr.number) as string,
        branch: pr.branch,
        prNumber: pr.number,
        prTitle: pr.title,
      });
      // The status the queue requires, on the PR's own head: a PR is admitted only once it passed.
      for (const context of required.split(', ')) {
        await this.#api.post('git/reportStatus', {
          repo,
          sha: heads.get(pr.number) as string,
          context,
          state: r.state,
          url: pathToFileURL(r.reportPath).href,
        });
      }
      this.#log(`  CI     PR #${pr.number} ${pr.branch}: ${describeRun(r.run)} → ${required}: ${r.state}`);
    }
    this.#check();

    for (const pr of PULL_REQUESTS) {
      await this.#api.post('submitPullRequest', { repo, targetBranch: TARGET, pr: { number: pr.number } });
    }
    this.#log(`✓ submitted PRs ${PULL_REQUESTS.map((p) => `#${p.number}`).join(' ')} to the merge queue`);
    // From now on the CI tests every test branch the queue builds, as a push-triggered CI would.
    ci.start();

    const final = await this.#watchQueue(deadline);
    return this.#summarise(final, started, deadline);
  }

  /** Follows each PR's history in the queue until every one has left it, or the deadline. */
  async #watchQueue(deadline: number): Promise<Map<number, SubmittedPr>> {
    const seen = new Map<number, number>();
    const latest = new Map<number, SubmittedPr>();
    for (;;) {
      this.#check();
      for (const pr of PULL_REQUESTS) {
        if (TERMINAL.has(latest.get(pr.number)?.state ?? '')) continue;
        const record = await this.#api.post<SubmittedPr>('getSubmittedPullRequest', {
          repo: DEMO_REPO,
          targetBranch: TARGET,
          pr: { number: pr.number },
        });
        latest.set(pr.number, record);
        for (const h of record.history.slice(seen.get(pr.number) ?? 0)) {
          if (SHOWN.has(h.state)) this.#log(`  queue  PR #${pr.number} ${h.state}: ${h.reason}`);
        }
        seen.set(pr.number, record.history.length);
      }
      const done = PULL_REQUESTS.every((pr) => TERMINAL.has(latest.get(pr.number)?.state ?? ''));
      if (done || Date.now() >= deadline) return latest;
      await sleep(WATCH_MS);
    }
  }

  async #unhealthy(status: 'FLAKY' | 'BROKEN'): Promise<DemoTest[]> {
    const page = await this.#api.post<{ tests: UnhealthyTest[] }>('flaky-tests/list-unhealthy-tests', {
      repo: DEMO_REPO,
      org_url_slug: DEMO_ORG,
      status,
      page_query: { page_size: 100 },
    });
    const tests: DemoTest[] = [];
    for (const t of page.tests) {
      const details = await this.#api.post<{ test: { failure_rate_last_7d: number } }>(
        'flaky-tests/get-test-details',
        { repo: DEMO_REPO, org_url_slug: DEMO_ORG, test_id: t.id },
      );
      tests.push({
        id: t.id,
        name: t.name,
        classname: t.classname ?? '',
        status: t.status.value,
        reason: t.status.reason,
        quarantined: t.quarantined,
        pullRequestsImpacted: t.pull_requests_impacted_last_7d,
        failureRate7d: details.test.failure_rate_last_7d,
      });
    }
    return tests;
  }

  async #summarise(final: Map<number, SubmittedPr>, started: number, deadline: number): Promise<DemoSummary> {
    const ci = this.#ci as LocalCi;
    const problems: string[] = [];
    // The runs are finished: their testing details come from the queue's archive now.
    const runs: (DemoTestRun & { prNumbers: readonly number[] })[] = [];
    for (const run of ci.queueRuns) {
      const d = await this.#api.post<TestingDetails>('getMergeQueueTestingDetails', {
        repo: DEMO_REPO,
        targetBranch: TARGET,
        testRunId: run.testRunId,
      });
      runs.push({
        testRunId: run.testRunId,
        testBranch: d.testBranch,
        status: d.status ?? 'unknown',
        prNumbers: d.testedPullRequests.map((p) => p.prNumber),
        ...(d.failureReason !== undefined ? { failureReason: d.failureReason } : {}),
      });
    }
    const prs = PULL_REQUESTS.map((pr): DemoPrResult => {
      const record = final.get(pr.number);
      const state = record?.state ?? 'unknown';
      const reason = record?.stateReason ?? '';
      if (!TERMINAL.has(state)) {
        const waited = Math.round((deadline - started) / 1000);
        problems.push(`PR #${pr.number} is still ${state} after ${waited} s`);
      } else if (state !== pr.expected) {
        problems.push(`PR #${pr.number} ${state} (expected: ${pr.expected}): ${reason}`);
      } else if (pr.expectedReason !== undefined && !pr.expectedReason.test(reason)) {
        problems.push(`PR #${pr.number} ${state}, but not ${pr.expectedReason} as expected: ${reason}`);
      }
      return {
        number: pr.number,
        title: pr.title,
        branch: pr.branch,
        author: pr.author.login,
        story: pr.story,
        expected: pr.expected,
        state,
        reason,
        testRuns: runs.filter((r) => r.prNumbers.includes(pr.number)).map(({ prNumbers: _p, ...r }) => r),
      };
    });
    const flaky = await this.#unhealthy('FLAKY');
    const broken = await this.#unhealthy('BROKEN');
    const quarantinedPage = await this.#api.post<{
      quarantined_tests: { test_case_id: string; name: string; status: string }[];
    }>('flaky-tests/list-quarantined-tests', {
      repo: DEMO_REPO,
      org_url_slug: DEMO_ORG,
      page_query: { page_size: 100 },
    });
    const quarantined = quarantinedPage.quarantined_tests.map((q) => ({
      id: q.test_case_id,
      name: q.name,
      status: q.status,
    }));
    if (flaky.length === 0) problems.push('no test is FLAKY');
    if (broken.length === 0) problems.push('no test is BROKEN');
    if (quarantined.length === 0) problems.push('no test is quarantined');
    const elapsedMs = Date.now() - started;
    this.#log(
      problems.length === 0
        ? `✓ scenario finished in ${(elapsedMs / 1000).toFixed(1)} s`
        : `✗ scenario did not end as expected after ${(elapsedMs / 1000).toFixed(1)} s: ${problems[0]}` +
            (problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''),
    );
    return {
      ok: problems.length === 0,
      problems,
      elapsedMs,
      prs,
      flaky,
      broken,
      quarantined,
      ciJobs: ci.jobs,
    };
  }
}
