/**
 * Where the demo's repository lives: the built-in git forge, or a project on the GitLab simulator.
 * Each answers the same few steps, which the scenario takes as a developer and their CI would.
 */
import { grantNamespace } from '../app/gitlab/grants.ts';
import type { RepoRef } from '../app/repositories.ts';
import type { Server } from '../main.ts';
import type { DemoApi } from './api.ts';
import type { GitLabSimulator } from './gitlab-sim/simulator.ts';
import type { CommitStatusReport } from './local-ci.ts';

export const DEMO_ORG = 'demo';
export const DEMO_REPO: RepoRef = { host: 'git.local', owner: 'demo', name: 'shop' };
/** The demo's repository with `--forge gitlab`: a project on the GitLab simulator. */
export const DEMO_GITLAB_REPO: RepoRef = { host: 'gitlab.local', owner: 'demo', name: 'shop' };
/** The branch the demo's merge queue merges into. */
export const TARGET = 'main';

/** What the scenario does on the forge its repository lives on, as a developer and their CI would. */
export interface DemoForge {
  readonly repo: RepoRef;
  /** Creates the (empty) repository; answers its bare git directory, which the developer pushes to. */
  createRepository(): Promise<string>;
  /** Opens a pull (merge) request for a pushed branch; answers its number. */
  openPullRequest(pr: { title: string; author: string; branch: string; base: string }): Promise<number>;
  reportStatus(status: CommitStatusReport): Promise<void>;
  readonly label: string;
  readonly kind: 'git' | 'gitlab';
}

/** How the demo's output names a pull request: `PR #n`, or on GitLab `MR !n`. */
export function prName(kind: 'git' | 'gitlab', n: number): string {
  return kind === 'gitlab' ? `MR !${n}` : `PR #${n}`;
}

/** The built-in git forge, through Mainline's /v1/git API. */
export function gitForge(api: DemoApi): DemoForge {
  const repo = DEMO_REPO;
  let next = 1;
  return {
    repo,
    label: 'repository',
    kind: 'git',
    async createRepository() {
      return (await api.post<{ path: string }>('git/createRepository', { repo })).path;
    },
    async openPullRequest(pr) {
      const number = next++;
      await api.post('git/registerPullRequest', {
        repo,
        number,
        title: pr.title,
        author: pr.author,
        headBranch: pr.branch,
        baseBranch: pr.base,
      });
      return number;
    },
    async reportStatus(status) {
      await api.post('git/reportStatus', { repo, ...status });
    },
  };
}

/**
 * A project on the GitLab simulator: the operator's steps of docs/gitlab.md done here (the namespace
 * granted to the demo's organization, the webhook pointed at Mainline), merge requests opened and
 * CI's job statuses posted on GitLab, which tells Mainline through its webhooks.
 */
export async function gitlabForge(
  sim: GitLabSimulator,
  server: Server,
  url: string,
  log: (line: string) => void,
): Promise<DemoForge> {
  const repo = DEMO_GITLAB_REPO;
  const fullPath = `${repo.owner}/${repo.name}`;
  await grantNamespace(server.database.db, {
    orgSlug: DEMO_ORG,
    host: repo.host,
    namespace: repo.owner,
    now: Date.now(),
  });
  sim.setWebhookUrl(`${url}/webhooks/gitlab`);
  log(
    `GitLab simulator at ${sim.url}: namespace "${repo.owner}" granted to "${DEMO_ORG}", webhook to ${url}/webhooks/gitlab`,
  );
  return {
    repo,
    label: 'GitLab project',
    kind: 'gitlab',
    async createRepository() {
      await sim.createProject(fullPath, { empty: true });
      return sim.remote(fullPath);
    },
    async openPullRequest(pr) {
      const iid = await sim.openMergeRequest(fullPath, {
        source: pr.branch,
        target: pr.base,
        title: pr.title,
        author: pr.author,
      });
      await sim.flush();
      return iid;
    },
    async reportStatus(status) {
      await sim.setStatus(
        fullPath,
        status.sha,
        status.context,
        status.state === 'success' ? 'success' : 'failed',
      );
      await sim.flush();
    },
  };
}
