import type { AddressInfo } from 'node:net';
import { connectInstallation, grantOwner } from '../../src/app/forge-grants.ts';
import { GitRepositoryForge } from '../../src/forge/git-repository-forge.ts';
import { GitHubForge } from '../../src/forge/github/index.ts';
import { RoutingForge } from '../../src/forge/router.ts';
import { GitHubEventProcessor } from '../../src/runner/github-events.ts';
import { OBSERVE_EVERY_MS, QueueRunner } from '../../src/runner/queue-runner.ts';
import { repoIsGranted } from '../../src/store/forge/grants.ts';
import { buildTestApp, type TestApp } from './app.ts';
import {
  type GitHubSimulator,
  generateAppKeyPair,
  type OpenPullRequestOptions,
  startGitHubSimulator,
} from './github-sim/index.ts';
import { storedQueueState } from './queue-rows.ts';
import { createQueueWith, runUntilIdle } from './scenario-queue.ts';

const silent = { info() {}, warn() {}, error() {} };
export const SECRET = 'webhook-secret-for-tests';
export const GH_REPO = { host: 'github.com', owner: 'acme', name: 'widgets' } as const;

/**
 * Mainline listening on loopback with the GitHub forge pointed at the simulator, which sends its
 * signed webhooks to Mainline's /webhooks/github. The queue runner and the delivery processor are
 * stepped by hand, on a clock the test moves.
 */
export class GitHubScenario {
  readonly sim: GitHubSimulator;
  readonly t: TestApp;
  readonly token: string;
  readonly runner: QueueRunner;
  readonly events: GitHubEventProcessor;
  clock = Date.UTC(2026, 10, 2, 9);

  private constructor(sim: GitHubSimulator, t: TestApp, token: string, forge: RoutingForge) {
    this.sim = sim;
    this.t = t;
    this.token = token;
    const ctx = { db: t.db.database.db, config: t.config, now: () => this.clock, caches: t.caches };
    this.runner = new QueueRunner(ctx, forge, silent);
    this.events = new GitHubEventProcessor(ctx, forge, silent);
  }

  static async create(
    settings: Record<string, unknown> = {},
    options: {
      auth?: 'token' | 'app';
      files?: Record<string, string>;
      /** Leave the organization without the grant of the repository's owner (and without a queue). */
      ungranted?: boolean;
      /** More settings, as environment variables (e.g. MAINLINE_AUTH_FAIL_LIMIT). */
      env?: Record<string, string>;
    } = {},
  ): Promise<GitHubScenario> {
    const files = options.files ?? {
      'README.md': 'hello\n',
      '.mainline.yaml': 'merge:\n  required_statuses: [ci]\n',
    };
    const keys = options.auth === 'app' ? generateAppKeyPair() : undefined;
    const sim = await startGitHubSimulator(
      keys === undefined
        ? { webhookSecret: SECRET, token: 'ghp_simulated' }
        : { webhookSecret: SECRET, app: { id: 4242, publicKey: keys.publicKey } },
    );
    const auth =
      keys === undefined
        ? ({ kind: 'token', token: 'ghp_simulated' } as const)
        : ({ kind: 'app', appId: 4242, privateKey: keys.privateKeyPkcs1 } as const);
    await sim.createRepo(GH_REPO.owner, GH_REPO.name, { defaultBranch: 'main', files });
    let scenario: GitHubScenario | undefined;
    const env = {
      ...(keys === undefined
        ? { MAINLINE_GITHUB_TOKEN: 'ghp_simulated' }
        : { MAINLINE_GITHUB_APP_ID: '4242', MAINLINE_GITHUB_PRIVATE_KEY: keys.privateKeyPkcs1 }),
      MAINLINE_GITHUB_API_URL: sim.url,
      MAINLINE_GITHUB_HOST: 'github.com',
      MAINLINE_GITHUB_WEBHOOK_SECRET: SECRET,
      ...options.env,
    };
    const now = () => scenario?.clock ?? Date.UTC(2026, 10, 2, 9);
    let forge: RoutingForge | undefined;
    const t = await buildTestApp(env, {
      now,
      forge: (config, db) => {
        forge = new RoutingForge(
          new GitRepositoryForge({ root: config.gitRoot, db: db.database.db, now }),
          new GitHubForge({
            client: {
              baseUrl: sim.url,
              auth,
              log: silent,
              retryAfterBaseMs: 1,
              writeIntervalMs: 0,
            },
          }),
          'github.com',
          (repo) => repoIsGranted(db.database.db, repo.id),
        );
        return forge;
      },
    });
    if (forge === undefined) throw new Error('buildTestApp did not build the forge');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as AddressInfo).port;
    sim.setWebhookUrl(`http://127.0.0.1:${port}/webhooks/github`);
    const token = await t.token('acme');
    scenario = new GitHubScenario(sim, t, token, forge);
    if (options.ungranted === true) return scenario;
    // What the operator does once: connect the App's installation, or grant the owner for a token.
    const db = t.db.database.db;
    const at = scenario.clock;
    const github = forge.github;
    if (keys === undefined)
      await grantOwner(db, { orgSlug: 'acme', host: 'github.com', owner: GH_REPO.owner, now: at });
    else
      await connectInstallation(db, (id) => github.client.installationAccount(id), {
        orgSlug: 'acme',
        host: 'github.com',
        installationId: sim.installationId(GH_REPO.owner),
        now: at,
      });
    await createQueueWith((url, body) => scenario.post(url, body), GH_REPO, settings);
    return scenario;
  }

  post(url: string, body: object) {
    return this.t.post(url, body, this.token);
  }

  /** Opens a PR (by default head `f`, one file) whose required check has passed: its number. */
  async openGreenPr(
    pr: OpenPullRequestOptions = { head: 'f', title: 'F', files: { 'f.txt': 'f\n' } },
  ): Promise<number> {
    const n = await this.sim.openPullRequest(GH_REPO.owner, GH_REPO.name, pr);
    await this.headGreen(n);
    return n;
  }

  /** CI's required check ("ci") passes on PR n's head and the queue hears of it: only then is the PR ready. */
  async headGreen(n: number): Promise<void> {
    const head = (await this.sim.pullRequest(GH_REPO.owner, GH_REPO.name, n)).head.sha;
    await this.sim.completeCheck(GH_REPO.owner, GH_REPO.name, head, { name: 'ci', conclusion: 'success' });
    await this.deliver();
  }

  /** Waits for the simulator's webhooks, then processes the stored deliveries. */
  async deliver(): Promise<void> {
    await this.sim.flush();
    await this.events.runOnce();
  }

  /** Lets time pass, then alternates runner passes and webhook processing until nothing is left to do. */
  async settle(): Promise<void> {
    this.clock += OBSERVE_EVERY_MS;
    const db = this.t.db.database.db;
    await runUntilIdle(
      db,
      async () => {
        await this.runner.runOnce();
        await this.deliver();
      },
      async () =>
        (await db.selectFrom('github_deliveries').select('id').where('processed_at', 'is', null).execute())
          .length > 0,
    );
  }

  async pr(n: number) {
    return (
      await this.post('/v1/getSubmittedPullRequest', {
        repo: GH_REPO,
        targetBranch: 'main',
        pr: { number: n },
      })
    ).json();
  }

  /** Test runs in progress with a built branch. */
  async runsInProgress(): Promise<{ id: string; sha: string; branch: string; tested: number[] }[]> {
    const state = await storedQueueState(this.t.db.database.db);
    return Object.values(state.runs)
      .filter((r) => r.status === 'in_progress' && r.testBranchSha !== null)
      .map((r) => ({ id: r.id, sha: r.testBranchSha as string, branch: r.testBranch, tested: r.tested }));
  }

  async deliveriesStored(): Promise<number> {
    const rows = await this.t.db.database.db.selectFrom('github_deliveries').select('id').execute();
    return rows.length;
  }

  async close(): Promise<void> {
    await this.sim.close();
    await this.t.close();
  }
}
