import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { grantNamespace } from '../../../src/app/gitlab/grants.ts';
import { GitLabSimulator } from '../../../src/demo/gitlab-sim/simulator.ts';
import { GitRepositoryForge } from '../../../src/forge/git-repository-forge.ts';
import { GitHubForge } from '../../../src/forge/github/index.ts';
import { GitLabForge } from '../../../src/forge/gitlab/forge.ts';
import { RoutingForge } from '../../../src/forge/router.ts';
import { OBSERVE_EVERY_MS, QueueRunner } from '../../../src/runner/queue-runner.ts';
import { repoIsGranted } from '../../../src/store/forge/grants.ts';
import { buildTestApp, type TestApp } from '../app.ts';
import { createQueueWith } from '../scenario-queue.ts';

const silent = { info() {}, warn() {}, error() {} };
export const GL_SECRET = 'gitlab-webhook-secret-for-tests';
export const GL_TOKEN = 'glpat-simulated';
export const GL_REPO = { host: 'gitlab.com', owner: 'acme', name: 'widgets' } as const;
export const GL_PATH = `${GL_REPO.owner}/${GL_REPO.name}`;

/**
 * Mainline listening on loopback with the GitLab forge pointed at the simulator (API over HTTP, git
 * remote a local bare repository), whose webhooks go to Mainline's /webhooks/gitlab. The queue runner
 * is stepped by hand on a clock the test moves.
 */
export class GitLabScenario {
  readonly sim: GitLabSimulator;
  readonly t: TestApp;
  readonly token: string;
  readonly runner: QueueRunner;
  readonly forge: RoutingForge;
  clock = Date.UTC(2026, 10, 2, 9);

  private constructor(sim: GitLabSimulator, t: TestApp, token: string, forge: RoutingForge) {
    this.sim = sim;
    this.t = t;
    this.token = token;
    this.forge = forge;
    this.runner = new QueueRunner(
      { db: t.db.database.db, config: t.config, now: () => this.clock, caches: t.caches },
      forge,
      silent,
    );
  }

  static async create(
    settings: Record<string, unknown> = {},
    options: {
      files?: Record<string, string>;
      mergeMethod?: 'merge' | 'rebase_merge' | 'ff';
      /** The project's "Pipelines must succeed" setting. */
      pipelinesMustSucceed?: boolean;
      /** Approvals each merge request needs. */
      approvalsRequired?: number;
      /** The forge creates test branches' pipelines through the API (MAINLINE_GITLAB_CREATE_PIPELINES). */
      createPipelines?: boolean | readonly string[];
      /** Git over the simulator's HTTP (token as basic auth) instead of the bare repository's path. */
      httpRemote?: boolean;
      /** Leave the organization without the grant of the namespace (and without a queue). */
      ungranted?: boolean;
    } = {},
  ): Promise<GitLabScenario> {
    const sim = await GitLabSimulator.start({ token: GL_TOKEN, webhookSecret: GL_SECRET });
    await sim.createProject(GL_PATH, {
      files: options.files ?? {
        'README.md': 'hello\n',
        '.mainline.yaml': 'merge:\n  required_statuses: [ci]\n',
      },
      ...(options.mergeMethod === undefined ? {} : { mergeMethod: options.mergeMethod }),
      onlyAllowMergeIfPipelineSucceeds: options.pipelinesMustSucceed ?? false,
      approvalsRequired: options.approvalsRequired ?? 0,
    });
    let scenario: GitLabScenario | undefined;
    const now = () => scenario?.clock ?? Date.UTC(2026, 10, 2, 9);
    let forge: RoutingForge | undefined;
    const t = await buildTestApp(
      {
        MAINLINE_GITLAB_URL: sim.url,
        MAINLINE_GITLAB_HOST: 'gitlab.com',
        MAINLINE_GITLAB_TOKEN: GL_TOKEN,
        MAINLINE_GITLAB_WEBHOOK_SECRET: GL_SECRET,
      },
      {
        now,
        forge: (config, db) => {
          const gitlab = new GitLabForge({
            client: { baseUrl: sim.url, token: GL_TOKEN, log: silent, retryBaseMs: 1 },
            mirrorRoot: join(config.gitRoot, '.gitlab'),
            ...(options.httpRemote === true
              ? {}
              : {
                  remoteUrl: (repo: { owner: string; name: string }) =>
                    sim.remote(`${repo.owner}/${repo.name}`),
                }),
            createPipelines: options.createPipelines ?? false,
          });
          forge = new RoutingForge(
            new GitRepositoryForge({ root: config.gitRoot, db: db.database.db, now }),
            new GitHubForge({ client: { auth: { kind: 'token', token: '' } } }),
            '',
            (repo) => repoIsGranted(db.database.db, repo.id),
            { forge: gitlab, host: 'gitlab.com' },
          );
          return forge;
        },
      },
    );
    if (forge === undefined) throw new Error('buildTestApp did not build the forge');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as AddressInfo).port;
    sim.setWebhookUrl(`http://127.0.0.1:${port}/webhooks/gitlab`);
    const token = await t.token('acme');
    scenario = new GitLabScenario(sim, t, token, forge);
    if (options.ungranted === true) return scenario;
    await grantNamespace(t.db.database.db, {
      orgSlug: 'acme',
      host: 'gitlab.com',
      namespace: 'acme',
      now: scenario.clock,
    });
    await createQueueWith((url, body) => scenario.post(url, body), GL_REPO, settings);
    return scenario;
  }

  post(url: string, body: object) {
    return this.t.post(url, body, this.token);
  }

  /** Opens merge request from a new branch with these files; answers its iid. */
  async openMr(branch: string, files: Record<string, string>, title = `Change ${branch}`): Promise<number> {
    await this.sim.commit(GL_PATH, branch, files, { message: title });
    const iid = await this.sim.openMergeRequest(GL_PATH, { source: branch, title });
    await this.sim.flush();
    return iid;
  }

  /** CI's required job ("ci") passes on the MR's head: only then is it ready. */
  async headGreen(iid: number): Promise<void> {
    const sha = (await this.sim.mergeRequest(GL_PATH, iid))['sha'] as string;
    await this.sim.setStatus(GL_PATH, sha, 'ci', 'success');
    await this.sim.flush();
  }

  async submit(iid: number): Promise<void> {
    const res = await this.post('/v1/submitPullRequest', {
      repo: GL_REPO,
      targetBranch: 'main',
      pr: { number: iid },
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  /**
   * Lets time pass (OBSERVE_EVERY_MS, or `ms`), then runs the queue (webhooks are processed as they
   * arrive) until no action is due: one waiting on GitLab (a merge set to happen when its pipeline
   * succeeds) until its time does not count.
   */
  async settle(ms = OBSERVE_EVERY_MS): Promise<void> {
    this.clock += ms;
    const db = this.t.db.database.db;
    for (let i = 0; i < 30; i++) {
      await this.runner.runOnce();
      await this.sim.flush();
      const due = await db
        .selectFrom('queue_actions')
        .select('id')
        .where('done_at', 'is', null)
        .where((eb) => eb.or([eb('not_before', 'is', null), eb('not_before', '<=', this.clock)]))
        .execute();
      if (due.length === 0) return;
    }
    throw new Error('the queue did not settle in 30 passes');
  }

  async pr(n: number) {
    return (
      await this.post('/v1/getSubmittedPullRequest', {
        repo: GL_REPO,
        targetBranch: 'main',
        pr: { number: n },
      })
    ).json();
  }

  /** The test branches pushed to GitLab for merge request n (mainline-merge/pr-<n>/<run>), with their commits. */
  async testBranches(n: number): Promise<{ branch: string; sha: string }[]> {
    const out = await this.sim
      .project(GL_PATH)
      .repo.out([
        'for-each-ref',
        '--format=%(refname:lstrip=2) %(objectname)',
        `refs/heads/mainline-merge/pr-${n}/`,
      ]);
    return out === ''
      ? []
      : out.split('\n').map((line) => {
          const [branch = '', sha = ''] = line.split(' ');
          return { branch, sha };
        });
  }

  /** Every test branch on GitLab now (mainline-merge/*), with its commit. */
  async allTestBranches(): Promise<{ branch: string; sha: string }[]> {
    const out = await this.sim
      .project(GL_PATH)
      .repo.out(['for-each-ref', '--format=%(refname:lstrip=2) %(objectname)', 'refs/heads/mainline-merge/']);
    return out === ''
      ? []
      : out.split('\n').map((line) => {
          const [branch = '', sha = ''] = line.split(' ');
          return { branch, sha };
        });
  }

  /** The one test branch of merge request n (fails the test when there is not exactly one). */
  async testBranch(n: number): Promise<{ branch: string; sha: string }> {
    const found = await this.testBranches(n);
    expect(found, `test branches of !${n}`).toHaveLength(1);
    return found[0] as { branch: string; sha: string };
  }

  /** CI reports `state` for the "ci" job on merge request n's test branch. */
  async ciOnTestBranch(n: number, state: 'success' | 'failed'): Promise<string> {
    const { sha } = await this.testBranch(n);
    await this.sim.setStatus(GL_PATH, sha, 'ci', state);
    await this.sim.flush();
    return sha;
  }

  /** The test runs merge request n was tested in, oldest first, as its history names them. */
  async runsOf(n: number): Promise<string[]> {
    const pr = (await this.pr(n)) as { history?: { reason: string }[] };
    const ids = (pr.history ?? []).flatMap((h) => /testing in run (\S+)/.exec(h.reason)?.[1] ?? []);
    return [...new Set(ids)];
  }

  /** getMergeQueueTestingDetails of a run of the queue of main. */
  async testingDetails(testRunId: string | undefined) {
    const res = await this.post('/v1/getMergeQueueTestingDetails', {
      repo: GL_REPO,
      targetBranch: 'main',
      testRunId,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  async listPrs(): Promise<{ number: number; state: string }[]> {
    const res = await this.post('/v1/listPullRequests', { repo: GL_REPO, targetBranch: 'main' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { pullRequests?: { prNumber: number; state: string }[] };
    return (body.pullRequests ?? []).map((p) => ({ number: p.prNumber, state: p.state }));
  }

  async close(): Promise<void> {
    await this.sim.close();
    await this.t.close();
  }
}
