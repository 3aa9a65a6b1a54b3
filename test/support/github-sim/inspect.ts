import { labelsOf } from './ops-labels.ts';
import { findPull, pullJson } from './ops-pulls.ts';
import type { ServerLog } from './server.ts';
import type { Core, RepoState } from './state.ts';
import type { CheckRunState, Delivery, PullRequestView, RequestRecord } from './types.ts';

/** The read-only side of the simulator: what tests look at (state, requests, deliveries). */
export abstract class SimulatorInspection {
  protected constructor(
    protected readonly core: Core,
    protected readonly serverLog: ServerLog,
  ) {}

  /** Base URL for Octokit (`baseUrl`), e.g. http://127.0.0.1:PORT. */
  get url(): string {
    return this.core.base;
  }

  /** Every REST request received, in order. */
  get requests(): readonly RequestRecord[] {
    return this.serverLog.requests;
  }

  /** Unexpected errors answered with 500 (a simulator bug or unsupported input). */
  get errors(): readonly Error[] {
    return this.serverLog.errors;
  }

  /** Every webhook delivery attempt, in order. */
  get deliveries(): readonly Delivery[] {
    return this.core.webhooks.deliveries;
  }

  installationId(owner: string): number {
    return this.core.credentials.installationId(owner);
  }

  /** The PR as GET /pulls/{n} shows it (mergeable computed). */
  async pullRequest(owner: string, name: string, number: number): Promise<PullRequestView> {
    const repo = this.repoOf(owner, name);
    return (await pullJson(this.core, repo, findPull(repo, number), 'peek')) as PullRequestView;
  }

  head(owner: string, name: string, branch: string): Promise<string | null> {
    return this.repoOf(owner, name).git.branch(branch);
  }

  comments(owner: string, name: string, number: number) {
    return [...this.repoOf(owner, name).comments.values()]
      .filter((c) => c.issue === number)
      .map((c) => ({ id: c.id, body: c.body, user: c.user, createdAt: c.createdAt, updatedAt: c.updatedAt }));
  }

  /** The names of the PR's labels, in the order they were added. */
  labels(owner: string, name: string, number: number): string[] {
    return [...labelsOf(findPull(this.repoOf(owner, name), number))];
  }

  /** Every status posted at sha, oldest first. */
  statuses(owner: string, name: string, sha: string) {
    return this.repoOf(owner, name)
      .statuses.filter((s) => s.sha === sha)
      .map((s) => ({ ...s }));
  }

  /** Every check run at sha, oldest first. */
  checkRuns(owner: string, name: string, sha: string): CheckRunState[] {
    return [...this.repoOf(owner, name).checkRuns.values()]
      .filter((r) => r.headSha === sha)
      .map((r) => ({ ...r }));
  }

  /** Content of a file at a branch or commit, or null. */
  async fileAt(owner: string, name: string, ref: string, file: string): Promise<string | null> {
    const repo = this.repoOf(owner, name);
    const sha = await repo.git.resolveRef(ref);
    const entry = sha === null ? null : await repo.git.entry(sha, file);
    return entry?.type === 'blob' ? entry.content.toString('utf8') : null;
  }

  /** Subjects of ref's first-parent history, newest first. */
  async log(owner: string, name: string, ref: string): Promise<string[]> {
    const repo = this.repoOf(owner, name);
    const sha = await this.shaOf(repo, ref);
    const out = await repo.git.out(['log', '--first-parent', '--format=%s', sha, '--']);
    return out === '' ? [] : out.split('\n');
  }

  gitDir(owner: string, name: string): string {
    return this.repoOf(owner, name).git.dir;
  }

  deliveriesOf(event: string, action?: string): Delivery[] {
    return this.deliveries.filter(
      (d) => d.event === event && (action === undefined || d.payload.action === action),
    );
  }

  /** Wait until every queued webhook (e.g. from REST merges, sent after the response) was delivered. */
  flush(): Promise<void> {
    return this.core.webhooks.flush();
  }

  /** Requests whose method matches and whose path equals, or matches, path. */
  requestsTo(method: string, path: string | RegExp): RequestRecord[] {
    return this.requests.filter(
      (r) =>
        r.method === method.toUpperCase() && (typeof path === 'string' ? r.path === path : path.test(r.path)),
    );
  }

  protected repoOf(owner: string, name: string): RepoState {
    const repo = this.core.findRepo(owner, name);
    if (!repo) throw new Error(`no repository ${owner}/${name}`);
    return repo;
  }

  protected async shaOf(repo: RepoState, ref: string): Promise<string> {
    const sha = await repo.git.resolveRef(ref);
    if (sha === null) throw new Error(`no commit ${ref} in ${repo.owner}/${repo.name}`);
    return sha;
  }
}
