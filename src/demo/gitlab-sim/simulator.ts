/**
 * A stateful GitLab (REST API v4 subset, git over HTTP, webhooks) for tests and `mainline demo
 * --forge gitlab`, over real bare git repositories. See README.md in this folder.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BareRepo, ZERO_SHA } from './git.ts';
import { GIT_HTTP, serveGitHttp } from './git-http.ts';
import type {
  CommitStatus,
  Delivery,
  JobStatus,
  MergeMethod,
  MergeRequest,
  Note,
  Pipeline,
  Project,
  Request,
  User,
} from './model.ts';
import { answerRest, type Fault } from './rest.ts';
import { SimState } from './state.ts';
import { Webhooks } from './webhooks.ts';

export type { Delivery, JobStatus, MergeMethod, Project, Request } from './model.ts';

export interface GitLabSimulatorOptions {
  /** The token REST calls must send (PRIVATE-TOKEN or Authorization: Bearer). */
  token: string;
  /** Sent as X-Gitlab-Token with every webhook. */
  webhookSecret: string;
}

export class GitLabSimulator {
  readonly url: string;
  readonly deliveries: Delivery[];
  readonly requests: Request[] = [];
  /** Fail the next REST calls whose "METHOD path" matches with this status (one entry per call). */
  readonly faults: Fault[] = [];
  readonly #server: Server;
  readonly #root: string;
  readonly #options: GitLabSimulatorOptions;
  readonly #hooks: Webhooks;
  readonly #s: SimState;
  /** One REST call or driver step at a time, as a database lock would. */
  #lock: Promise<unknown> = Promise.resolve();

  private constructor(server: Server, url: string, root: string, options: GitLabSimulatorOptions) {
    this.#server = server;
    this.url = url;
    this.#root = root;
    this.#options = options;
    this.#hooks = new Webhooks(url, options.webhookSecret);
    this.#s = new SimState(url, this.#hooks);
    this.deliveries = this.#hooks.deliveries;
  }

  static async start(options: GitLabSimulatorOptions): Promise<GitLabSimulator> {
    const root = await mkdtemp(path.join(tmpdir(), 'gitlab-sim-'));
    let sim: GitLabSimulator | undefined;
    const server = createServer((req, res) => {
      sim?.handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(JSON.stringify({ message: String(error) }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    sim = new GitLabSimulator(server, `http://127.0.0.1:${port}`, root, options);
    return sim;
  }

  /** Where webhooks go; undefined stops sending them (as lost deliveries). */
  setWebhookUrl(url: string | undefined): void {
    this.#hooks.target = url;
  }

  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await rm(this.#root, { recursive: true, force: true });
  }

  /** Waits until every webhook sent so far was answered. */
  flush(): Promise<void> {
    return this.#hooks.flush();
  }

  #locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn, fn);
    this.#lock = run.catch(() => {});
    return run;
  }

  // ---------------------------------------------------------------- driver steps (the test's hands)

  user(username: string): User {
    return this.#s.user(username);
  }

  /** A project `group[/sub]/name` with a first commit of `files` on the default branch. */
  async createProject(
    fullPath: string,
    options: {
      files?: Record<string, string>;
      defaultBranch?: string;
      mergeMethod?: MergeMethod;
      onlyAllowMergeIfPipelineSucceeds?: boolean;
      /** Approvals each new merge request needs (the project's approval rule). */
      approvalsRequired?: number;
      /** No first commit: the project's history is pushed to it. */
      empty?: boolean;
      /** A fork of this project (its branches copied), with a repository of its own. */
      forkOf?: string;
    } = {},
  ): Promise<Project> {
    const defaultBranch = options.defaultBranch ?? 'main';
    const repo = new BareRepo(path.join(this.#root, `${fullPath}.git`));
    await repo.init(defaultBranch);
    if (options.forkOf !== undefined) {
      await repo.run([
        'fetch',
        '--quiet',
        this.project(options.forkOf).repo.gitDir,
        '+refs/heads/*:refs/heads/*',
      ]);
    } else if (options.empty !== true) {
      const first = await repo.commitFiles(
        null,
        options.files ?? { 'README.md': 'hello\n' },
        'Initial commit',
      );
      await repo.setRef(`refs/heads/${defaultBranch}`, first);
    }
    const project: Project = {
      id: this.#s.nextId++,
      pipelines: [],
      approvalsRequired: options.approvalsRequired ?? 0,
      allowMergeOnSkippedPipeline: false,
      path: fullPath,
      repo,
      defaultBranch,
      mergeMethod: options.mergeMethod ?? 'merge',
      onlyAllowMergeIfPipelineSucceeds: options.onlyAllowMergeIfPipelineSucceeds ?? false,
      mrs: new Map(),
      statuses: [],
      notes: new Map(),
      members: new Map(),
      nextIid: 1,
    };
    this.#s.projects.set(project.id, project);
    return project;
  }

  project(fullPath: string): Project {
    for (const p of this.#s.projects.values()) if (p.path.toLowerCase() === fullPath.toLowerCase()) return p;
    throw new Error(`no project ${fullPath}`);
  }

  /** The git remote of a project (a local path: Mainline's forge fetches and pushes there). */
  remote(fullPath: string): string {
    return this.project(fullPath).repo.gitDir;
  }

  addMember(fullPath: string, username: string, accessLevel: number): void {
    this.project(fullPath).members.set(this.user(username).id, accessLevel);
  }

  /** A commit of `files` on `branch` (created from `from`, default the default branch), pushed. */
  commit(
    fullPath: string,
    branch: string,
    files: Record<string, string | null>,
    options: { message?: string; from?: string; author?: string } = {},
  ): Promise<string> {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      const before = await p.repo.branch(branch);
      const parent = before ?? (await p.repo.branch(options.from ?? p.defaultBranch));
      const sha = await p.repo.commitFiles(
        parent,
        files,
        options.message ?? `Change ${branch}`,
        options.author,
      );
      await p.repo.setRef(`refs/heads/${branch}`, sha);
      await this.#s.pushed(p, branch, before, sha, options.author ?? 'sim');
      return sha;
    });
  }

  /** Opens a merge request and answers its iid. */
  openMergeRequest(
    fullPath: string,
    input: {
      source: string;
      target?: string;
      title: string;
      author?: string;
      draft?: boolean;
      approvalsRequired?: number;
      /** From a fork: source_project_id is another project's (the branch stands for the fork's). */
      fromFork?: boolean;
      /**
       * From this fork project (created with forkOf): the source branch is the fork's, in the fork's
       * own repository.
       */
      fork?: string;
      /** "Allow commits from members who can merge to the target branch". */
      allowCollaboration?: boolean;
    },
  ): Promise<number> {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      const fork = input.fork === undefined ? undefined : this.project(input.fork);
      if ((await (fork ?? p).repo.branch(input.source)) === null)
        throw new Error(`no branch ${input.source}`);
      const mr: MergeRequest = {
        iid: p.nextIid++,
        id: this.#s.nextId++,
        title: input.title,
        author: this.user(input.author ?? 'ada'),
        sourceBranch: input.source,
        targetBranch: input.target ?? p.defaultBranch,
        state: 'opened',
        draft: input.draft ?? false,
        frozenSha: null,
        mergeCommitSha: null,
        squashCommitSha: null,
        approvalsRequired: input.approvalsRequired ?? p.approvalsRequired,
        approvedBy: new Set(),
        sourceProjectId: fork?.id ?? (input.fromFork === true ? this.#s.nextId++ : null),
        allowCollaboration: input.allowCollaboration ?? false,
      };
      p.mrs.set(mr.iid, mr);
      await this.#s.syncMrRef(p, mr);
      this.#s.hook(p, 'merge_request', await this.#s.mrHook(p, mr, 'open', mr.author));
      return mr.iid;
    });
  }

  /** CI (or anyone) reports a commit status, as POST /projects/:id/statuses/:sha does. */
  setStatus(
    fullPath: string,
    sha: string,
    name: string,
    status: JobStatus,
    options: { allowFailure?: boolean } = {},
  ) {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      return this.#s.addStatus(p, sha, name, status, null, null, null, options.allowFailure ?? false);
    });
  }

  /** A note on a merge request by a user (as GitLab's UI posts it), with its webhook. */
  addNote(fullPath: string, iid: number, username: string, body: string): Promise<void> {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      const mr = this.#s.mr(p, iid);
      await this.#s.addNote(p, mr, this.user(username), body);
    });
  }

  closeMergeRequest(fullPath: string, iid: number, username = 'ada'): Promise<void> {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      const mr = this.#s.mr(p, iid);
      mr.frozenSha = await this.#s.headOf(p, mr);
      mr.state = 'closed';
      this.#s.hook(p, 'merge_request', await this.#s.mrHook(p, mr, 'close', this.user(username)));
    });
  }

  setDraft(fullPath: string, iid: number, draft: boolean): void {
    this.#s.mr(this.project(fullPath), iid).draft = draft;
  }

  /** A user approves a merge request, with the merge request webhook GitLab sends (action approved). */
  approve(fullPath: string, iid: number, username: string): Promise<void> {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      const mr = this.#s.mr(p, iid);
      const user = this.user(username);
      mr.approvedBy.add(user.id);
      this.#s.hook(p, 'merge_request', await this.#s.mrHook(p, mr, 'approved', user));
    });
  }

  /** Pipelines created through the API, oldest first. */
  createdPipelines(fullPath: string): readonly Pipeline[] {
    return this.project(fullPath).pipelines.filter((x) => x.source === 'api');
  }

  // ---------------------------------------------------------------- reads for assertions

  async mergeRequest(fullPath: string, iid: number): Promise<Record<string, unknown>> {
    const p = this.project(fullPath);
    return this.#s.mrJson(p, this.#s.mr(p, iid));
  }

  branchHead(fullPath: string, branch: string): Promise<string | null> {
    return this.project(fullPath).repo.branch(branch);
  }

  log(fullPath: string, branch: string): Promise<string[]> {
    return this.project(fullPath).repo.log(`refs/heads/${branch}`);
  }

  notes(fullPath: string, iid: number): Note[] {
    return this.project(fullPath).notes.get(iid) ?? [];
  }

  statuses(fullPath: string, sha: string): CommitStatus[] {
    return this.project(fullPath).statuses.filter((s) => s.sha === sha);
  }

  /** Sends a delivery again with the same UUID (GitLab's retry or "Resend request"). */
  redeliver(delivery: Delivery, token?: string): Promise<{ status: number; body: string }> {
    return this.#hooks.redeliver(delivery, token);
  }

  // ---------------------------------------------------------------- REST

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (GIT_HTTP.test(url.pathname)) return this.#gitHttp(req, res, url, Buffer.concat(chunks));
    return answerRest(
      this.#s,
      {
        token: this.#options.token,
        requests: this.requests,
        faults: this.faults,
        locked: (fn) => this.#locked(fn),
      },
      req,
      res,
      url,
      Buffer.concat(chunks).toString('utf8'),
    );
  }

  #gitHttp(req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer): Promise<void> {
    return serveGitHttp(req, res, url, body, {
      root: this.#root,
      token: this.#options.token,
      requests: this.requests,
      // Merge requests read their heads from the branches: a push to a merge request's source branch
      // sends the push and merge request events GitLab sends (the token's user pushed), and keeps the
      // merge requests' refs current. It starts the branch's pipeline (the merge request's head
      // pipeline), whose jobs the test then reports with setStatus; skipped with the ci.skip option.
      afterPush: (options) =>
        this.#locked(async () => {
          for (const p of this.#s.projects.values()) {
            const moved = new Map<string, { before: string; after: string }>();
            for (const mr of p.mrs.values()) {
              if (mr.state !== 'opened') continue;
              const before = await p.repo.resolve(`refs/merge-requests/${mr.iid}/head`);
              const after = await this.#s.headOf(p, mr);
              if (before !== null && before !== after) moved.set(mr.sourceBranch, { before, after });
            }
            for (const [branch, { before, after }] of moved) {
              if (after !== ZERO_SHA) {
                const skipped = options.includes('ci.skip');
                p.pipelines.push({ id: this.#s.nextId++, sha: after, ref: branch, source: 'push', skipped });
              }
              await this.#s.pushed(p, branch, before, after === ZERO_SHA ? null : after, 'mainline-bot');
            }
            for (const mr of p.mrs.values()) if (mr.state === 'opened') await this.#s.syncMrRef(p, mr);
          }
        }),
    });
  }
}
