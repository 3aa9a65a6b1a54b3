/** What the demo's scenario ended with: each PR's fate, the unhealthy tests, read back through the API. */
import type { DemoApi } from './api.ts';
import { DEMO_ORG, type DemoForge, prName, TARGET } from './forges.ts';
import type { LocalCi, TestingDetails } from './local-ci.ts';
import { PULL_REQUESTS } from './repo-script.ts';

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

/** The part of getSubmittedPullRequest the demo reads. */
export interface SubmittedPr {
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

export const TERMINAL = new Set(['merged', 'failed', 'cancelled']);

/** The scenario's results, read once every PR left the queue (or the deadline passed). */
export class ScenarioResults {
  readonly #api: DemoApi;
  readonly #forge: DemoForge;
  readonly #ci: LocalCi;
  readonly #log: (line: string) => void;

  constructor(api: DemoApi, forge: DemoForge, ci: LocalCi, log: (line: string) => void) {
    this.#api = api;
    this.#forge = forge;
    this.#ci = ci;
    this.#log = log;
  }

  async #unhealthy(status: 'FLAKY' | 'BROKEN'): Promise<DemoTest[]> {
    const page = await this.#api.post<{ tests: UnhealthyTest[] }>('flaky-tests/list-unhealthy-tests', {
      repo: this.#forge.repo,
      org_url_slug: DEMO_ORG,
      status,
      page_query: { page_size: 100 },
    });
    const tests: DemoTest[] = [];
    for (const t of page.tests) {
      const details = await this.#api.post<{ test: { failure_rate_last_7d: number } }>(
        'flaky-tests/get-test-details',
        { repo: this.#forge.repo, org_url_slug: DEMO_ORG, test_id: t.id },
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

  async summarise(final: Map<number, SubmittedPr>, started: number, deadline: number): Promise<DemoSummary> {
    const ci = this.#ci as LocalCi;
    const problems: string[] = [];
    // The runs are finished: their testing details come from the queue's archive now.
    const runs: (DemoTestRun & { prNumbers: readonly number[] })[] = [];
    for (const run of ci.queueRuns) {
      const d = await this.#api.post<TestingDetails>('getMergeQueueTestingDetails', {
        repo: this.#forge.repo,
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
        problems.push(`${prName(this.#forge.kind, pr.number)} is still ${state} after ${waited} s`);
      } else if (state !== pr.expected) {
        problems.push(
          `${prName(this.#forge.kind, pr.number)} ${state} (expected: ${pr.expected}): ${reason}`,
        );
      } else if (pr.expectedReason !== undefined && !pr.expectedReason.test(reason)) {
        problems.push(
          `${prName(this.#forge.kind, pr.number)} ${state}, but not ${pr.expectedReason} as expected: ${reason}`,
        );
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
      repo: this.#forge.repo,
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
