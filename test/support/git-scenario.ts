import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { GitRepositoryForge } from '../../src/forge/git-repository-forge.ts';
import { OBSERVE_EVERY_MS, QueueRunner } from '../../src/runner/queue-runner.ts';
import { buildTestApp, REPO, type TestApp } from './app.ts';
import { commitFiles, gitEnv as gitEnvOf } from './git-fixture.ts';
import { storedQueueState } from './queue-rows.ts';

const silent = { info() {}, warn() {}, error() {} };

/**
 * A merge queue on a real git repository, driven through the HTTP API as users and CI would, with
 * the real runner stepped by hand (no timers): open PRs, submit them, report CI, read the target's history.
 */
export class GitScenario {
  readonly t: TestApp;
  readonly token: string;
  readonly work: string;
  readonly bare: string;
  readonly runner: QueueRunner;
  readonly #dirs: string[];
  clock: number;
  /** The statuses CI reports passed on each PR's head when it is opened (the queue's required ones). */
  headChecks: string[] = ['ci'];

  private constructor(
    t: TestApp,
    token: string,
    bare: string,
    work: string,
    dirs: string[],
    clock: { now: number },
  ) {
    this.t = t;
    this.token = token;
    this.bare = bare;
    this.work = work;
    this.#dirs = dirs;
    this.clock = clock.now;
    const ctx = { db: t.db.database.db, config: t.config, now: () => this.clock, caches: t.caches };
    this.runner = new QueueRunner(
      ctx,
      new GitRepositoryForge({ root: t.config.gitRoot, db: t.db.database.db, now: ctx.now }),
      silent,
    );
  }

  static async create(
    settings: Record<string, unknown> = {},
    files: Record<string, string> = { 'README.md': 'hello\n' },
    env: Record<string, string> = {},
  ): Promise<GitScenario> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-git-'));
    const clock = { now: Date.UTC(2026, 10, 2, 9) };
    let scenario: GitScenario | undefined;
    const t = await buildTestApp(
      { MAINLINE_GIT_ROOT: path.join(root, 'repos'), ...env },
      { now: () => scenario?.clock ?? clock.now },
    );
    const token = await t.token('acme');
    const created = await t.post('/v1/git/createRepository', { repo: REPO }, token);
    expect(created.statusCode).toBe(200);
    const work = path.join(root, 'work');
    // -q does not silence git's "You appear to have cloned an empty repository" warning: stderr is piped.
    execFileSync('git', ['clone', '-q', created.json().path, work], { env: gitEnv(), stdio: 'pipe' });
    scenario = new GitScenario(t, token, created.json().path, work, [root], clock);
    scenario.git('checkout', '-q', '-b', 'main');
    scenario.commit(files, 'Initial commit');
    scenario.git('push', '-q', 'origin', 'main');
    expect((await t.post('/v1/createQueue', { repo: REPO, targetBranch: 'main' }, token)).statusCode).toBe(
      200,
    );
    // The queue tests nothing without required statuses: "ci" unless the test names them itself.
    const yamlRequires = files['.mainline.yaml']?.includes('required_statuses') ?? false;
    const required =
      settings['requiredStatuses'] === undefined && !yamlRequires ? { requiredStatuses: ['ci'] } : {};
    if (Object.keys(settings).length > 0 || !yamlRequires) {
      expect(
        (
          await t.post(
            '/v1/updateQueue',
            { repo: REPO, targetBranch: 'main', ...required, ...settings },
            token,
          )
        ).statusCode,
      ).toBe(200);
    }
    const named = settings['requiredStatuses'];
    if (Array.isArray(named)) scenario.headChecks = named as string[];
    return scenario;
  }

  git(...args: string[]): string {
    return execFileSync('git', args, { cwd: this.work, env: gitEnv(), encoding: 'utf8' }).trim();
  }

  commit(files: Record<string, string>, message: string): void {
    commitFiles(this.work, (...args) => this.git(...args), files, message);
  }

  /**
   * Pushes a branch off main with the files and registers it as PR n; CI then reports `headCi` for
   * each of `headChecks` on its head (a PR is ready to queue only once they passed there).
   */
  async openPr(
    n: number,
    files: Record<string, string>,
    title = `PR ${n}`,
    headCi: 'success' | 'failure' | 'none' = 'success',
  ): Promise<void> {
    this.git('checkout', '-q', 'main');
    this.git('reset', '-q', '--hard', 'origin/main');
    this.git('checkout', '-q', '-B', `feature-${n}`);
    this.commit(files, title);
    this.git('push', '-q', '-f', 'origin', `feature-${n}`);
    const res = await this.post('/v1/git/registerPullRequest', {
      repo: REPO,
      number: n,
      title,
      author: 'dev',
      headBranch: `feature-${n}`,
      baseBranch: 'main',
    });
    expect(res.statusCode, res.body).toBe(200);
    if (headCi === 'none') return;
    for (const context of this.headChecks) await this.headCi(n, headCi, context);
  }

  /** CI reports a status on PR n's current head (its branch feature-n). */
  async headCi(n: number, state: 'success' | 'failure' | 'pending', context = 'ci'): Promise<void> {
    const sha = this.bareGit('rev-parse', `refs/heads/feature-${n}`);
    const res = await this.post('/v1/git/reportStatus', { repo: REPO, sha, context, state });
    expect(res.statusCode, res.body).toBe(200);
  }

  /** Pushes a commit straight to main, as someone outside the queue would. */
  pushToMain(files: Record<string, string>, message: string): void {
    this.git('checkout', '-q', 'main');
    this.git('fetch', '-q', 'origin');
    this.git('reset', '-q', '--hard', 'origin/main');
    this.commit(files, message);
    this.git('push', '-q', 'origin', 'main');
  }

  post(url: string, body: object) {
    return this.t.post(url, body, this.token);
  }

  async submit(n: number, extra: object = {}): Promise<void> {
    const res = await this.post('/v1/submitPullRequest', {
      repo: REPO,
      targetBranch: 'main',
      pr: { number: n },
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  /** Lets a few seconds pass (so the runner looks at the repository again), then runs passes until the outbox is empty. */
  async settle(): Promise<void> {
    this.clock += OBSERVE_EVERY_MS;
    for (let i = 0; i < 20; i++) {
      await this.runner.runOnce();
      const pending = await this.t.db.database.db
        .selectFrom('queue_actions')
        .select('id')
        .where('done_at', 'is', null)
        .execute();
      if (pending.length === 0) return;
    }
    throw new Error('the queue did not settle in 20 passes');
  }

  async queue() {
    return (await this.post('/v1/getQueue', { repo: REPO, targetBranch: 'main' })).json();
  }

  async pr(n: number) {
    return (
      await this.post('/v1/getSubmittedPullRequest', { repo: REPO, targetBranch: 'main', pr: { number: n } })
    ).json();
  }

  /** Test runs in progress with a built branch: [runId, sha, tested PRs]. */
  async runsInProgress(): Promise<{ id: string; sha: string; tested: number[] }[]> {
    const state = await storedQueueState(this.t.db.database.db);
    return Object.values(state.runs)
      .filter((r) => r.status === 'in_progress' && r.testBranchSha !== null)
      .map((r) => ({ id: r.id, sha: r.testBranchSha as string, tested: r.tested }));
  }

  /** CI reports `state` for the runs testing PR n (or every run in progress when n is omitted). */
  async ci(state: 'success' | 'failure', n?: number, context = 'ci'): Promise<void> {
    for (const run of await this.runsInProgress()) {
      if (n !== undefined && !run.tested.includes(n)) continue;
      const res = await this.post('/v1/git/reportStatus', {
        repo: REPO,
        sha: run.sha,
        context,
        state,
        url: `https://ci.example/${run.id}`,
      });
      expect(res.statusCode, res.body).toBe(200);
    }
  }

  /** Subjects of the target branch's own history (its first-parent chain), newest first. */
  history(): string[] {
    return execFileSync('git', ['--git-dir', this.bare, 'log', '--first-parent', '--format=%s', 'main'], {
      encoding: 'utf8',
      env: gitEnv(),
    })
      .trim()
      .split('\n');
  }

  /** A git command in the server's bare repository. */
  bareGit(...args: string[]): string {
    return execFileSync('git', ['--git-dir', this.bare, ...args], { encoding: 'utf8', env: gitEnv() }).trim();
  }

  fileOnMain(name: string): string {
    return execFileSync('git', ['--git-dir', this.bare, 'show', `main:${name}`], {
      encoding: 'utf8',
      env: gitEnv(),
    });
  }

  async close(): Promise<void> {
    await this.t.close();
    for (const d of this.#dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

const gitEnv = () => gitEnvOf({ name: 'Dev', email: 'dev@example.com' });
