/**
 * The demo's story: the repository and its history, the pull requests with their own CI, the merge
 * queue, then watching each PR until it leaves the queue. Everything goes through the HTTP API and git.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { DemoApi } from './api.ts';
import { DEMO_ORG, type DemoForge, prName, TARGET } from './forges.ts';
import { describeRun, LocalCi } from './local-ci.ts';
import { HISTORY, PULL_REQUESTS, Workspace } from './repo-script.ts';
import { type DemoSummary, ScenarioResults, type SubmittedPr, TERMINAL } from './results.ts';

const WATCH_MS = 250;
/** Queue states worth a progress line (pending and tests_passed are steps on the way). */
const SHOWN = new Set(['testing', 'pending_failure', 'merged', 'failed', 'cancelled']);

/** A demo that cannot start (bad folder) or was stopped. */
export class DemoError extends Error {
  override name = 'DemoError';
}

export class Scenario {
  readonly #api: DemoApi;
  readonly #forge: DemoForge;
  readonly #dataDir: string;
  readonly #log: (line: string) => void;
  readonly #signal: AbortSignal | undefined;
  #gitDir = '';
  #ci: LocalCi | undefined;

  constructor(
    api: DemoApi,
    forge: DemoForge,
    dataDir: string,
    log: (line: string) => void,
    signal: AbortSignal | undefined,
  ) {
    this.#api = api;
    this.#forge = forge;
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
    const repo = this.#forge.repo;
    const created = { path: await this.#forge.createRepository() };
    this.#gitDir = created.path;
    this.#log(
      `✓ created ${this.#forge.label} ${repo.host}/${repo.owner}/${repo.name} (bare git repository ${created.path})`,
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
      reportStatus: (status) => this.#forge.reportStatus(status),
      prName: (n) => prName(this.#forge.kind, n),
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
      const number = await this.#forge.openPullRequest({
        title: pr.title,
        author: pr.author.login,
        branch: pr.branch,
        base: TARGET,
      });
      if (number !== pr.number)
        throw new DemoError(
          `${prName(this.#forge.kind, pr.number)} was opened as ${prName(this.#forge.kind, number)}`,
        );
      this.#log(
        `  opened ${prName(this.#forge.kind, pr.number)} "${pr.title}" by ${pr.author.login} (${pr.branch}): ${pr.story}`,
      );
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
        await ci.reportStatus({
          sha: heads.get(pr.number) as string,
          context,
          state: r.state,
          url: pathToFileURL(r.reportPath).href,
        });
      }
      this.#log(
        `  CI     ${prName(this.#forge.kind, pr.number)} ${pr.branch}: ${describeRun(r.run)} → ${required}: ${r.state}`,
      );
    }
    this.#check();

    for (const pr of PULL_REQUESTS) {
      await this.#api.post('submitPullRequest', { repo, targetBranch: TARGET, pr: { number: pr.number } });
    }
    this.#log(
      `✓ submitted ${this.#forge.kind === 'gitlab' ? 'MRs' : 'PRs'} ${PULL_REQUESTS.map((p) => prName(this.#forge.kind, p.number).split(' ')[1]).join(' ')} to the merge queue`,
    );
    // From now on the CI tests every test branch the queue builds, as a push-triggered CI would.
    ci.start();

    const final = await this.#watchQueue(deadline);
    return new ScenarioResults(this.#api, this.#forge, ci, this.#log).summarise(final, started, deadline);
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
          repo: this.#forge.repo,
          targetBranch: TARGET,
          pr: { number: pr.number },
        });
        latest.set(pr.number, record);
        for (const h of record.history.slice(seen.get(pr.number) ?? 0)) {
          if (SHOWN.has(h.state))
            this.#log(`  queue  ${prName(this.#forge.kind, pr.number)} ${h.state}: ${h.reason}`);
        }
        seen.set(pr.number, record.history.length);
      }
      const done = PULL_REQUESTS.every((pr) => TERMINAL.has(latest.get(pr.number)?.state ?? ''));
      if (done || Date.now() >= deadline) return latest;
      await sleep(WATCH_MS);
    }
  }
}
