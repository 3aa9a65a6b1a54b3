/**
 * The demo's built-in CI. It runs the synthetic suite (test-suite.ts) on a commit, writes the JUnit
 * report to disk, uploads it with the same client `mainline upload` uses, and, for merge-queue test
 * branches, reports the commit status the queue waits for (POST /v1/git/reportStatus).
 *
 * Like a CI triggered by pushes, it watches the repository for `mainline-merge/…` test branches and
 * tests each one once; it asks the queue (getMergeQueueTestingDetails) which PRs a branch tests and
 * which statuses it needs. What the suite does depends only on the files the commit adds or changes
 * compared with the target branch's head (repo-script.ts EFFECT_PATHS).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { RepoRef } from '../app/repositories.ts';
import { postUpload, type UploadMeta, type UploadResponse } from '../cli/client.ts';
import type { DemoApi } from './api.ts';
import { git } from './git.ts';
import { junitXml } from './junit-report.ts';
import { EFFECT_PATHS } from './repo-script.ts';
import { type Effect, runSuite, type SuiteRun, TEST_FILES, testLabel } from './test-suite.ts';

/** The prefix of the queue's test branches (`<prefix>/pr-<n>/<testRunId>`). */
export const TEST_BRANCH_PREFIX = 'mainline-merge';
const JOB_NAME = 'local-ci / test';

export interface CiJob {
  readonly kind: 'main' | 'pr' | 'queue';
  readonly sha: string;
  readonly branch: string;
  readonly prNumber?: number | undefined;
  readonly prTitle?: string | undefined;
  /** When the tests ran (default: now); older history is dated in the report. */
  readonly ranAt?: Date | undefined;
}

export interface CiResult {
  readonly job: CiJob;
  readonly run: SuiteRun;
  readonly effects: ReadonlySet<Effect>;
  readonly state: 'success' | 'failure';
  readonly upload: UploadResponse;
  /** The JUnit report on disk; its file: URL is the status's and the upload's job URL. */
  readonly reportPath: string;
}

/** A merge-queue test run the CI tested. */
export interface QueueRunTested {
  readonly testRunId: string;
  readonly testBranch: string;
  readonly sha: string;
  readonly prNumbers: readonly number[];
  readonly state: 'success' | 'failure';
}

/** What getMergeQueueTestingDetails answers (the fields the CI reads). */
export interface TestingDetails {
  requiredStatuses: string[];
  testBranch: string;
  testBranchSha: string;
  status?: 'in_progress' | 'succeeded' | 'failed' | 'cancelled';
  testedPullRequests: { prNumber: number; title: string }[];
  dependentPrs?: number[];
  failureReason?: string;
  testResults?: { uploads: number; testCases: number; failures: number };
  flakeProtection?: { decision: string; reason: string };
}

export interface LocalCiOptions {
  readonly api: DemoApi;
  readonly org: string;
  readonly repo: RepoRef;
  /** The server's bare repository (the CI reads commits from it, as a clone would). */
  readonly gitDir: string;
  readonly targetBranch: string;
  /** Where the JUnit reports are written. */
  readonly reportsDir: string;
  readonly log: (line: string) => void;
  /** How often the repository is looked at for new test branches. */
  readonly pollMs?: number;
  /** Reports a commit status where the forge takes it (default POST /v1/git/reportStatus). */
  readonly reportStatus?: (status: CommitStatusReport) => Promise<void>;
  /** How the log names a pull request (default `PR #n`; on GitLab `MR !n`). */
  readonly prName?: (n: number) => string;
}

/** A commit status as the local CI reports it. */
export interface CommitStatusReport {
  readonly sha: string;
  readonly context: string;
  readonly state: 'success' | 'failure';
  readonly url: string;
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_');

/** `34 tests: 33 passed, 1 failed (billing.invoice › …)`. */
export function describeRun(run: SuiteRun): string {
  const parts = [`${run.tests - run.failed.length} passed`];
  if (run.retriedIntoPass.length > 0)
    parts.push(
      `${run.retriedIntoPass.length} of them on a retry (${run.retriedIntoPass.map(testLabel).join(', ')})`,
    );
  if (run.failed.length > 0)
    parts.push(`${run.failed.length} failed (${run.failed.map(testLabel).join(', ')})`);
  return `${run.tests} tests: ${parts.join(', ')}`;
}

export class LocalCi {
  readonly #o: LocalCiOptions;
  readonly #tested = new Set<string>();
  readonly #runs: QueueRunTested[] = [];
  #jobs = 0;
  #stop: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: LocalCiOptions) {
    this.#o = options;
  }

  /** The merge-queue runs tested so far, in order. */
  get queueRuns(): readonly QueueRunTested[] {
    return this.#runs;
  }

  /** How many CI jobs ran (main, pull request and merge-queue commits). */
  get jobs(): number {
    return this.#jobs;
  }

  #git(args: readonly string[]): Promise<string> {
    return git(['--git-dir', this.#o.gitDir, ...args]);
  }

  /** The suite's test files present in the commit: the CI runs what the commit has. */
  async #testFiles(sha: string): Promise<Set<string>> {
    const listed = await this.#git(['ls-tree', '-r', '--name-only', sha, '--', ...TEST_FILES]);
    return new Set(listed.split('\n').filter((f) => f !== ''));
  }

  /**
   * The effects of the changes under test: trigger files the commit adds or changes compared with the
   * target branch's head (a change already merged, or one the commit does not have, is not under test).
   */
  async #effects(sha: string): Promise<Set<Effect>> {
    const target = `refs/heads/${this.#o.targetBranch}`;
    const args = ['diff', '--name-only', '--diff-filter=AM', target, sha, '--', ...EFFECT_PATHS.keys()];
    const changed = (await this.#git(args)).split('\n');
    const effects = new Set<Effect>();
    for (const file of changed) {
      const effect = EFFECT_PATHS.get(file);
      if (effect !== undefined) effects.add(effect);
    }
    return effects;
  }

  /** Runs the suite on one commit and uploads the report. Uploading the same job again ingests nothing. */
  async test(job: CiJob): Promise<CiResult> {
    this.#jobs++;
    const effects = job.kind === 'main' ? new Set<Effect>() : await this.#effects(job.sha);
    const run = runSuite(await this.#testFiles(job.sha), effects);
    const reportPath = path.join(this.#o.reportsDir, `${slug(job.branch)}-${job.sha.slice(0, 10)}.xml`);
    await fs.mkdir(this.#o.reportsDir, { recursive: true });
    const xml = junitXml(run, {
      name: `${JOB_NAME} on ${job.branch}`,
      ...(job.ranAt ? { timestamp: job.ranAt } : {}),
    });
    await fs.writeFile(reportPath, xml);
    const meta: UploadMeta = {
      repo: this.#o.repo,
      org_url_slug: this.#o.org,
      branch: job.branch,
      commit_sha: job.sha,
      job_name: JOB_NAME,
      job_url: pathToFileURL(reportPath).href,
      upload_key: `local-ci:${job.branch}@${job.sha}`,
      ...(job.prNumber !== undefined ? { pr_number: job.prNumber } : {}),
      ...(job.prTitle !== undefined ? { pr_title: job.prTitle } : {}),
    };
    const upload = await postUpload(this.#o.api.baseUrl, this.#o.api.token, meta, [
      { name: 'reports/junit.xml', body: Buffer.from(xml) },
    ]);
    return { job, run, effects, state: run.failed.length > 0 ? 'failure' : 'success', upload, reportPath };
  }

  /** Reports a commit status to the forge the demo runs on. */
  async reportStatus(status: CommitStatusReport): Promise<void> {
    if (this.#o.reportStatus !== undefined) return this.#o.reportStatus(status);
    await this.#o.api.post('git/reportStatus', { repo: this.#o.repo, ...status });
  }

  /** One look at the repository: tests every test branch not tested yet whose run is waiting for CI. */
  async pollOnce(): Promise<void> {
    const refs = await this.#git([
      'for-each-ref',
      '--format=%(objectname) %(refname)',
      `refs/heads/${TEST_BRANCH_PREFIX}`,
    ]);
    for (const line of refs.split('\n')) {
      const [sha, ref] = line.split(' ');
      if (sha === undefined || ref === undefined || this.#tested.has(`${ref}@${sha}`)) continue;
      const testBranch = ref.slice('refs/heads/'.length);
      const testRunId = testBranch.split('/').slice(2).join('/');
      if (testRunId === '') continue;
      await this.#testQueueRun(testRunId, testBranch, sha);
    }
  }

  async #testQueueRun(testRunId: string, testBranch: string, sha: string): Promise<void> {
    const details = await this.#o.api.post<TestingDetails>('getMergeQueueTestingDetails', {
      repo: this.#o.repo,
      targetBranch: this.#o.targetBranch,
      testRunId,
    });
    if (details.status !== 'in_progress') {
      this.#tested.add(`refs/heads/${testBranch}@${sha}`);
      return;
    }
    // Still being built (or rebuilt): look again on the next pass.
    if (details.testBranchSha !== sha) return;
    const prNumbers = details.testedPullRequests.map((p) => p.prNumber);
    const only = details.testedPullRequests.length === 1 ? details.testedPullRequests[0] : undefined;
    const result = await this.test({
      kind: 'queue',
      sha,
      branch: testBranch,
      prNumber: only?.prNumber,
      prTitle: only?.title,
    });
    const contexts = details.requiredStatuses.length > 0 ? details.requiredStatuses : ['test'];
    for (const context of contexts) {
      await this.reportStatus({
        sha,
        context,
        state: result.state,
        url: pathToFileURL(result.reportPath).href,
      });
    }
    this.#tested.add(`refs/heads/${testBranch}@${sha}`);
    this.#runs.push({ testRunId, testBranch, sha, prNumbers, state: result.state });
    const prs = prNumbers.map((n) => this.#o.prName?.(n) ?? `PR #${n}`).join(', ');
    this.#o.log(
      `  CI     ${testBranch} (${prs}): ${describeRun(result.run)} → ${contexts.join(', ')}: ${result.state}`,
    );
  }

  /** Starts watching the repository for test branches, until stop(). */
  start(): void {
    if (this.#loop !== undefined) return;
    const stop = new AbortController();
    this.#stop = stop;
    this.#loop = this.#watch(stop.signal);
  }

  async #watch(signal: AbortSignal): Promise<void> {
    let lastError = '';
    while (!signal.aborted) {
      try {
        await this.pollOnce();
        lastError = '';
      } catch (error) {
        if (signal.aborted) break;
        const message = error instanceof Error ? error.message : String(error);
        if (message !== lastError) this.#o.log(`  CI     could not test a branch (will retry): ${message}`);
        lastError = message;
      }
      await sleep(this.#o.pollMs ?? 150, undefined, { signal }).catch(() => undefined);
    }
  }

  /** Stops watching; resolves once the pass in progress (if any) has finished. */
  async stop(): Promise<void> {
    this.#stop?.abort();
    await this.#loop;
    this.#loop = undefined;
    this.#stop = undefined;
  }
}
