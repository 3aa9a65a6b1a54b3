import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BareRepo, ZERO_SHA } from './git.ts';

/**
 * A stateful GitLab (REST API v4 subset, webhooks) for tests, over real bare git repositories.
 * See README.md in this folder for what it serves and how it behaves.
 */

export type MergeMethod = 'merge' | 'rebase_merge' | 'ff';
export type JobStatus = 'created' | 'pending' | 'running' | 'success' | 'failed' | 'canceled' | 'skipped';
const STATUSES: readonly string[] = ['pending', 'running', 'success', 'failed', 'canceled', 'skipped'];

interface User {
  id: number;
  username: string;
  name: string;
}

interface MergeRequest {
  iid: number;
  id: number;
  title: string;
  author: User;
  sourceBranch: string;
  targetBranch: string;
  state: 'opened' | 'closed' | 'merged';
  draft: boolean;
  /** Head when merged or closed (frozen); open MRs read their source branch. */
  frozenSha: string | null;
  mergeCommitSha: string | null;
  squashCommitSha: string | null;
  approvalsRequired: number;
  approvedBy: Set<number>;
}

interface CommitStatus {
  id: number;
  sha: string;
  ref: string | null;
  name: string;
  status: JobStatus;
  targetUrl: string | null;
  description: string | null;
  allowFailure: boolean;
  pipelineId: number;
  createdAt: string;
}

interface Note {
  id: number;
  body: string;
  author: User;
  system: boolean;
  createdAt: string;
}

export interface Project {
  id: number;
  path: string;
  repo: BareRepo;
  defaultBranch: string;
  mergeMethod: MergeMethod;
  onlyAllowMergeIfPipelineSucceeds: boolean;
  mrs: Map<number, MergeRequest>;
  statuses: CommitStatus[];
  notes: Map<number, Note[]>;
  members: Map<number, number>;
  nextIid: number;
}

export interface Delivery {
  event: string;
  uuid: string;
  payload: Record<string, unknown>;
  status: number | null;
  body: string;
}

export interface Request {
  method: string;
  path: string;
  status: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const EVENTS: Record<string, string> = {
  merge_request: 'Merge Request Hook',
  note: 'Note Hook',
  pipeline: 'Pipeline Hook',
  build: 'Job Hook',
  push: 'Push Hook',
};

export interface GitLabSimulatorOptions {
  /** The token REST calls must send (PRIVATE-TOKEN or Authorization: Bearer). */
  token: string;
  /** Sent as X-Gitlab-Token with every webhook. */
  webhookSecret: string;
}

export class GitLabSimulator {
  readonly url: string;
  readonly deliveries: Delivery[] = [];
  readonly requests: Request[] = [];
  /** Fail the next REST calls whose "METHOD path" matches with this status (one entry per call). */
  readonly faults: { match: RegExp; status: number; message: string }[] = [];
  readonly #server: Server;
  readonly #root: string;
  readonly #options: GitLabSimulatorOptions;
  readonly #projects = new Map<number, Project>();
  readonly #users = new Map<string, User>();
  #webhookUrl: string | undefined;
  #nextId = 1000;
  #pending: Promise<void>[] = [];
  /** One REST call or driver step at a time, as a database lock would. */
  #lock: Promise<unknown> = Promise.resolve();

  private constructor(server: Server, url: string, root: string, options: GitLabSimulatorOptions) {
    this.#server = server;
    this.url = url;
    this.#root = root;
    this.#options = options;
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
    this.#webhookUrl = url;
  }

  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await rm(this.#root, { recursive: true, force: true });
  }

  /** Waits until every webhook sent so far was answered. */
  async flush(): Promise<void> {
    while (this.#pending.length > 0) {
      const pending = this.#pending;
      this.#pending = [];
      await Promise.all(pending);
    }
  }

  #locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn, fn);
    this.#lock = run.catch(() => {});
    return run;
  }

  // ---------------------------------------------------------------- driver steps (the test's hands)

  user(username: string): User {
    let user = this.#users.get(username.toLowerCase());
    if (user === undefined) {
      user = { id: this.#nextId++, username, name: username };
      this.#users.set(username.toLowerCase(), user);
    }
    return user;
  }

  /** A project `group[/sub]/name` with a first commit of `files` on the default branch. */
  async createProject(
    fullPath: string,
    options: {
      files?: Record<string, string>;
      defaultBranch?: string;
      mergeMethod?: MergeMethod;
      onlyAllowMergeIfPipelineSucceeds?: boolean;
    } = {},
  ): Promise<Project> {
    const defaultBranch = options.defaultBranch ?? 'main';
    const repo = new BareRepo(path.join(this.#root, `${fullPath}.git`));
    await repo.init(defaultBranch);
    const first = await repo.commitFiles(null, options.files ?? { 'README.md': 'hello\n' }, 'Initial commit');
    await repo.setRef(`refs/heads/${defaultBranch}`, first);
    const project: Project = {
      id: this.#nextId++,
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
    this.#projects.set(project.id, project);
    return project;
  }

  project(fullPath: string): Project {
    for (const p of this.#projects.values()) if (p.path.toLowerCase() === fullPath.toLowerCase()) return p;
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
      await this.#pushed(p, branch, before, sha, options.author ?? 'sim');
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
    },
  ): Promise<number> {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      if ((await p.repo.branch(input.source)) === null) throw new Error(`no branch ${input.source}`);
      const mr: MergeRequest = {
        iid: p.nextIid++,
        id: this.#nextId++,
        title: input.title,
        author: this.user(input.author ?? 'ada'),
        sourceBranch: input.source,
        targetBranch: input.target ?? p.defaultBranch,
        state: 'opened',
        draft: input.draft ?? false,
        frozenSha: null,
        mergeCommitSha: null,
        squashCommitSha: null,
        approvalsRequired: input.approvalsRequired ?? 0,
        approvedBy: new Set(),
      };
      p.mrs.set(mr.iid, mr);
      await this.#syncMrRef(p, mr);
      this.#hook(p, 'merge_request', await this.#mrHook(p, mr, 'open', mr.author));
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
      return this.#addStatus(p, sha, name, status, null, null, null, options.allowFailure ?? false);
    });
  }

  /** A note on a merge request by a user (as GitLab's UI posts it), with its webhook. */
  addNote(fullPath: string, iid: number, username: string, body: string): Promise<void> {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      const mr = this.#mr(p, iid);
      await this.#addNote(p, mr, this.user(username), body);
    });
  }

  closeMergeRequest(fullPath: string, iid: number, username = 'ada'): Promise<void> {
    return this.#locked(async () => {
      const p = this.project(fullPath);
      const mr = this.#mr(p, iid);
      mr.frozenSha = await this.#headOf(p, mr);
      mr.state = 'closed';
      this.#hook(p, 'merge_request', await this.#mrHook(p, mr, 'close', this.user(username)));
    });
  }

  setDraft(fullPath: string, iid: number, draft: boolean): void {
    this.#mr(this.project(fullPath), iid).draft = draft;
  }

  // ---------------------------------------------------------------- reads for assertions

  async mergeRequest(fullPath: string, iid: number): Promise<Record<string, unknown>> {
    const p = this.project(fullPath);
    return this.#mrJson(p, this.#mr(p, iid));
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

  // ---------------------------------------------------------------- state changes behind REST and steps

  #mr(p: Project, iid: number): MergeRequest {
    const mr = p.mrs.get(iid);
    if (mr === undefined) throw new HttpError(404, '404 Not found');
    return mr;
  }

  async #headOf(p: Project, mr: MergeRequest): Promise<string> {
    if (mr.frozenSha !== null) return mr.frozenSha;
    return (await p.repo.branch(mr.sourceBranch)) ?? ZERO_SHA;
  }

  async #syncMrRef(p: Project, mr: MergeRequest): Promise<void> {
    const head = await this.#headOf(p, mr);
    if (head !== ZERO_SHA) await p.repo.setRef(`refs/merge-requests/${mr.iid}/head`, head);
  }

  /** A branch moved: push hook, and the open merge requests from it get their new head. */
  async #pushed(p: Project, branch: string, before: string | null, after: string | null, username: string) {
    const user = this.user(username);
    this.#hook(p, 'push', {
      object_kind: 'push',
      event_name: 'push',
      before: before ?? ZERO_SHA,
      after: after ?? ZERO_SHA,
      ref: `refs/heads/${branch}`,
      checkout_sha: after,
      user_id: user.id,
      user_username: user.username,
      project_id: p.id,
      project: this.#projectHook(p),
      commits: [],
      total_commits_count: after === null ? 0 : 1,
    });
    for (const mr of p.mrs.values()) {
      if (mr.state !== 'opened' || mr.sourceBranch !== branch) continue;
      if (after === null) {
        mr.frozenSha = before;
        mr.state = 'closed';
        this.#hook(p, 'merge_request', await this.#mrHook(p, mr, 'close', user));
        continue;
      }
      await this.#syncMrRef(p, mr);
      this.#hook(p, 'merge_request', await this.#mrHook(p, mr, 'update', user, before ?? undefined));
    }
  }

  async #addStatus(
    p: Project,
    sha: string,
    name: string,
    status: JobStatus,
    ref: string | null,
    targetUrl: string | null,
    description: string | null,
    allowFailure: boolean,
  ): Promise<CommitStatus> {
    if ((await p.repo.resolve(sha)) !== sha) throw new HttpError(404, '404 References Not Found');
    const existing = p.statuses.find((s) => s.sha === sha);
    const row: CommitStatus = {
      id: this.#nextId++,
      sha,
      ref,
      name,
      status,
      targetUrl,
      description,
      allowFailure,
      pipelineId: existing?.pipelineId ?? this.#nextId++,
      createdAt: new Date().toISOString(),
    };
    p.statuses.push(row);
    const latest = this.#latestStatuses(p, sha);
    this.#hook(p, 'build', {
      object_kind: 'build',
      ref: ref ?? '',
      sha,
      build_id: row.id,
      build_name: name,
      build_status: status,
      build_allow_failure: allowFailure,
      pipeline_id: row.pipelineId,
      project_id: p.id,
      project: this.#projectHook(p),
    });
    this.#hook(p, 'pipeline', {
      object_kind: 'pipeline',
      object_attributes: {
        id: row.pipelineId,
        sha,
        ref: ref ?? '',
        status: pipelineStatus(latest),
        source: 'external',
      },
      project: this.#projectHook(p),
      builds: latest.map((s) => ({
        id: s.id,
        name: s.name,
        status: s.status,
        allow_failure: s.allowFailure,
      })),
    });
    return row;
  }

  /** The latest status of each name on a commit, newest first. */
  #latestStatuses(p: Project, sha: string): CommitStatus[] {
    const out = new Map<string, CommitStatus>();
    for (const s of [...p.statuses].reverse()) if (s.sha === sha && !out.has(s.name)) out.set(s.name, s);
    return [...out.values()];
  }

  async #addNote(p: Project, mr: MergeRequest, author: User, body: string): Promise<Note> {
    const note: Note = {
      id: this.#nextId++,
      body,
      author,
      system: false,
      createdAt: new Date().toISOString(),
    };
    const list = p.notes.get(mr.iid) ?? [];
    list.push(note);
    p.notes.set(mr.iid, list);
    this.#hook(p, 'note', {
      object_kind: 'note',
      event_type: 'note',
      user: { id: author.id, username: author.username, name: author.name },
      project_id: p.id,
      project: this.#projectHook(p),
      object_attributes: { id: note.id, note: body, noteable_type: 'MergeRequest', author_id: author.id },
      merge_request: {
        iid: mr.iid,
        id: mr.id,
        target_branch: mr.targetBranch,
        source_branch: mr.sourceBranch,
      },
    });
    return note;
  }

  async #mergeStatus(p: Project, mr: MergeRequest): Promise<string> {
    if (mr.state !== 'opened') return 'not_open';
    if (mr.draft) return 'draft_status';
    const head = await this.#headOf(p, mr);
    const target = await p.repo.branch(mr.targetBranch);
    if (target === null || head === ZERO_SHA) return 'broken_status';
    if ((await p.repo.mergeTree(target, head)) === null) return 'conflict';
    if (mr.approvedBy.size < mr.approvalsRequired) return 'not_approved';
    if (p.mergeMethod !== 'merge' && !(await p.repo.isAncestor(target, head))) return 'need_rebase';
    if (p.onlyAllowMergeIfPipelineSucceeds) {
      const latest = this.#latestStatuses(p, head);
      if (latest.length === 0 || pipelineStatus(latest) !== 'success') {
        return latest.some((s) => s.status === 'running' || s.status === 'pending')
          ? 'ci_still_running'
          : 'ci_must_pass';
      }
    }
    return 'mergeable';
  }

  async #mrJson(p: Project, mr: MergeRequest): Promise<Record<string, unknown>> {
    const sha = await this.#headOf(p, mr);
    const target = await p.repo.branch(mr.targetBranch);
    const base = target === null || sha === ZERO_SHA ? null : await p.repo.mergeBase(target, sha);
    const detailed = await this.#mergeStatus(p, mr);
    return {
      id: mr.id,
      iid: mr.iid,
      project_id: p.id,
      title: mr.draft ? `Draft: ${mr.title}` : mr.title,
      state: mr.state,
      source_branch: mr.sourceBranch,
      target_branch: mr.targetBranch,
      source_project_id: p.id,
      target_project_id: p.id,
      sha,
      draft: mr.draft,
      work_in_progress: mr.draft,
      detailed_merge_status: detailed,
      merge_status: detailed === 'conflict' ? 'cannot_be_merged' : 'can_be_merged',
      has_conflicts: detailed === 'conflict',
      author: { id: mr.author.id, username: mr.author.username, name: mr.author.name },
      diff_refs: { base_sha: base, head_sha: sha, start_sha: target },
      merge_commit_sha: mr.mergeCommitSha,
      squash_commit_sha: mr.squashCommitSha,
      web_url: `${this.url}/${p.path}/-/merge_requests/${mr.iid}`,
    };
  }

  async #mrHook(p: Project, mr: MergeRequest, action: string, user: User, oldrev?: string) {
    const json = await this.#mrJson(p, mr);
    return {
      object_kind: 'merge_request',
      event_type: 'merge_request',
      user: { id: user.id, username: user.username, name: user.name },
      project: this.#projectHook(p),
      object_attributes: {
        id: mr.id,
        iid: mr.iid,
        title: json['title'],
        state: mr.state,
        action,
        source_branch: mr.sourceBranch,
        target_branch: mr.targetBranch,
        detailed_merge_status: json['detailed_merge_status'],
        last_commit: { id: json['sha'] },
        ...(oldrev === undefined ? {} : { oldrev }),
        draft: mr.draft,
      },
    };
  }

  #projectHook(p: Project) {
    return {
      id: p.id,
      name: p.path.split('/').at(-1),
      path_with_namespace: p.path,
      default_branch: p.defaultBranch,
      web_url: `${this.url}/${p.path}`,
      git_http_url: `${this.url}/${p.path}.git`,
    };
  }

  #hook(p: Project, kind: string, payload: Record<string, unknown>): void {
    void p;
    const url = this.#webhookUrl;
    const event = EVENTS[kind] ?? kind;
    const uuid = randomUUID();
    const delivery: Delivery = { event, uuid, payload, status: null, body: '' };
    this.deliveries.push(delivery);
    if (url === undefined) return;
    // Sent in order: each waits for the one before it.
    const previous = this.#pending.at(-1) ?? Promise.resolve();
    this.#pending.push(
      previous.then(async () => {
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'user-agent': 'GitLab/17.5.0',
              'x-gitlab-event': event,
              'x-gitlab-token': this.#options.webhookSecret,
              'x-gitlab-event-uuid': uuid,
              'x-gitlab-webhook-uuid': 'b3c7a7f0-0000-4000-8000-000000000001',
              'idempotency-key': uuid,
              'x-gitlab-instance': this.url,
            },
            body: JSON.stringify(payload),
          });
          delivery.status = res.status;
          delivery.body = await res.text();
        } catch (error) {
          delivery.status = 0;
          delivery.body = String(error);
        }
      }),
    );
  }

  /** Sends a delivery again with the same UUID (GitLab's retry or "Resend request"). */
  async redeliver(
    delivery: Delivery,
    token = this.#options.webhookSecret,
  ): Promise<{ status: number; body: string }> {
    if (this.#webhookUrl === undefined) throw new Error('no webhook URL');
    const res = await fetch(this.#webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gitlab-event': delivery.event,
        'x-gitlab-token': token,
        'x-gitlab-event-uuid': delivery.uuid,
        'idempotency-key': delivery.uuid,
      },
      body: JSON.stringify(delivery.payload),
    });
    return { status: res.status, body: await res.text() };
  }

  // ---------------------------------------------------------------- REST

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const method = req.method ?? 'GET';
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ method, path: url.pathname, status });
      res.writeHead(status, {
        'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
        ...headers,
      });
      res.end(typeof body === 'string' ? body : body === null ? '' : JSON.stringify(body));
    };
    const token = req.headers['private-token'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    if (token !== this.#options.token) return send(401, { message: '401 Unauthorized' });
    const fault = this.faults.findIndex((f) => f.match.test(`${method} ${url.pathname}`));
    if (fault >= 0) {
      const [f] = this.faults.splice(fault, 1);
      return send(f?.status ?? 500, { message: f?.message ?? 'fault' });
    }
    let body: Record<string, unknown> = {};
    if (raw !== '') {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return send(400, { error: 'body is not JSON' });
      }
    }
    for (const [k, v] of url.searchParams) if (!(k in body)) body[k] = v;
    try {
      const out = await this.#locked(() => this.#route(method, url, body));
      if (out.raw !== undefined) return send(out.status, out.raw);
      return send(out.status, out.json ?? null, out.headers);
    } catch (error) {
      if (error instanceof HttpError) {
        return send(
          error.status,
          error.status === 400 ? { error: error.message } : { message: error.message },
        );
      }
      throw error;
    }
  }

  async #route(
    method: string,
    url: URL,
    body: Record<string, unknown>,
  ): Promise<{ status: number; json?: unknown; raw?: string; headers?: Record<string, string> }> {
    const segments = url.pathname.split('/').slice(1);
    if (segments[0] !== 'api' || segments[1] !== 'v4') throw new HttpError(404, '404 Not Found');
    const rest = segments.slice(2);
    if (method === 'GET' && rest[0] === 'users' && rest.length === 1) {
      const name = String(body['username'] ?? '');
      const user = this.#users.get(name.toLowerCase());
      return {
        status: 200,
        json:
          user === undefined
            ? []
            : [{ id: user.id, username: user.username, name: user.name, state: 'active' }],
      };
    }
    if (rest[0] !== 'projects' || rest[1] === undefined) throw new HttpError(404, '404 Not Found');
    const p = this.#findProject(decodeURIComponent(rest[1]));
    const tail = rest.slice(2);
    const [a, b, c, d, e] = tail;
    if (tail.length === 0 && method === 'GET') {
      return {
        status: 200,
        json: {
          id: p.id,
          path_with_namespace: p.path,
          default_branch: p.defaultBranch,
          merge_method: p.mergeMethod,
          only_allow_merge_if_pipeline_succeeds: p.onlyAllowMergeIfPipelineSucceeds,
          http_url_to_repo: `${this.url}/${p.path}.git`,
          namespace: { full_path: p.path.split('/').slice(0, -1).join('/') },
        },
      };
    }
    if (a === 'repository' && b === 'branches' && c !== undefined && tail.length === 3) {
      const branch = decodeURIComponent(c);
      const sha = await p.repo.branch(branch);
      if (sha === null) throw new HttpError(404, '404 Branch Not Found');
      if (method === 'GET')
        return {
          status: 200,
          json: { name: branch, commit: { id: sha }, protected: branch === p.defaultBranch },
        };
      if (method === 'DELETE') {
        if (branch === p.defaultBranch) throw new HttpError(400, 'Cannot remove the default branch');
        await p.repo.deleteRef(`refs/heads/${branch}`);
        await this.#pushed(p, branch, sha, null, 'mainline-bot');
        return { status: 204 };
      }
    }
    if (a === 'repository' && b === 'files' && c !== undefined && d === 'raw' && method === 'GET') {
      const ref = String(body['ref'] ?? p.defaultBranch);
      const content = await p.repo.showFile(ref, decodeURIComponent(c));
      if (content === null) throw new HttpError(404, '404 File Not Found');
      return { status: 200, raw: content };
    }
    if (a === 'repository' && b === 'commits' && c !== undefined && d === 'statuses' && method === 'GET') {
      if ((await p.repo.resolve(c)) === null) throw new HttpError(404, '404 Commit Not Found');
      const all = body['all'] === 'true' || body['all'] === true;
      const rows = all ? p.statuses.filter((s) => s.sha === c) : this.#latestStatuses(p, c);
      return page(rows.map(statusJson), body);
    }
    if (a === 'statuses' && b !== undefined && tail.length === 2 && method === 'POST') {
      const state = String(body['state'] ?? '');
      if (!STATUSES.includes(state)) throw new HttpError(400, 'state does not have a valid value');
      const name = String(body['name'] ?? body['context'] ?? 'default');
      const row = await this.#addStatus(
        p,
        b,
        name,
        state as JobStatus,
        typeof body['ref'] === 'string' ? body['ref'] : null,
        typeof body['target_url'] === 'string' ? body['target_url'] : null,
        typeof body['description'] === 'string' ? body['description'] : null,
        false,
      );
      return { status: 201, json: statusJson(row) };
    }
    if (a === 'pipelines' && tail.length === 1 && method === 'GET') {
      const bySha = new Map<string, CommitStatus[]>();
      for (const s of p.statuses) bySha.set(s.sha, [...(bySha.get(s.sha) ?? []), s]);
      const rows = [...bySha.entries()]
        .filter(([sha]) => body['sha'] === undefined || body['sha'] === sha)
        .map(([sha, list]) => ({
          id: list[0]?.pipelineId,
          sha,
          ref: list[0]?.ref ?? null,
          status: pipelineStatus(this.#latestStatuses(p, sha)),
          source: 'external',
        }));
      return page(rows.reverse(), body);
    }
    if (a === 'members' && b === 'all' && c !== undefined && tail.length === 3 && method === 'GET') {
      const id = Number(c);
      const level = p.members.get(id);
      const user = [...this.#users.values()].find((u) => u.id === id);
      if (level === undefined || user === undefined) throw new HttpError(404, '404 Not found');
      return {
        status: 200,
        json: { id, username: user.username, name: user.name, state: 'active', access_level: level },
      };
    }
    if (a === 'merge_requests') {
      if (b === undefined && method === 'GET') {
        const rows: Record<string, unknown>[] = [];
        for (const mr of p.mrs.values()) {
          if (body['state'] !== undefined && body['state'] !== 'all' && body['state'] !== mr.state) continue;
          if (body['target_branch'] !== undefined && body['target_branch'] !== mr.targetBranch) continue;
          rows.push(await this.#mrJson(p, mr));
        }
        return page(rows.reverse(), body);
      }
      const mr = this.#mr(p, Number(b));
      if (c === undefined && method === 'GET') return { status: 200, json: await this.#mrJson(p, mr) };
      if (c === 'approvals' && d === undefined && method === 'GET') {
        return {
          status: 200,
          json: {
            approved: mr.approvedBy.size >= mr.approvalsRequired,
            approvals_required: mr.approvalsRequired,
            approvals_left: Math.max(0, mr.approvalsRequired - mr.approvedBy.size),
            approved_by: [...mr.approvedBy].map((id) => ({ user: { id } })),
          },
        };
      }
      if (c === 'merge' && d === undefined && method === 'PUT') return this.#merge(p, mr, body);
      if (c === 'notes') {
        if (d === undefined && method === 'GET') {
          const list = [...(p.notes.get(mr.iid) ?? [])];
          if (body['sort'] !== 'asc') list.reverse();
          return page(list.map(noteJson), body);
        }
        if (d === undefined && method === 'POST') {
          if (typeof body['body'] !== 'string' || body['body'] === '')
            throw new HttpError(400, 'body is missing');
          const note = await this.#addNote(p, mr, this.user('mainline-bot'), body['body']);
          return { status: 201, json: noteJson(note) };
        }
        if (d !== undefined && e === undefined && method === 'PUT') {
          const note = (p.notes.get(mr.iid) ?? []).find((n) => n.id === Number(d));
          if (note === undefined) throw new HttpError(404, '404 Note Not Found');
          if (typeof body['body'] !== 'string') throw new HttpError(400, 'body is missing');
          note.body = body['body'];
          return { status: 200, json: noteJson(note) };
        }
      }
    }
    throw new HttpError(404, '404 Not Found');
  }

  #findProject(id: string): Project {
    const byId = /^\d+$/.test(id) ? this.#projects.get(Number(id)) : undefined;
    if (byId !== undefined) return byId;
    for (const p of this.#projects.values()) if (p.path.toLowerCase() === id.toLowerCase()) return p;
    throw new HttpError(404, '404 Project Not Found');
  }

  /** PUT …/merge: GitLab's checks and answers, then the project's merge method. */
  async #merge(p: Project, mr: MergeRequest, body: Record<string, unknown>) {
    const head = await this.#headOf(p, mr);
    if (mr.state !== 'opened' || mr.draft) throw new HttpError(405, '405 Method Not Allowed');
    if (body['sha'] !== undefined && body['sha'] !== head) {
      throw new HttpError(409, 'SHA does not match HEAD of source branch');
    }
    const status = await this.#mergeStatus(p, mr);
    if (status === 'conflict' || status === 'need_rebase')
      throw new HttpError(406, 'Branch cannot be merged');
    if (status !== 'mergeable') throw new HttpError(405, '405 Method Not Allowed');
    const target = await p.repo.branch(mr.targetBranch);
    if (target === null) throw new HttpError(406, 'Branch cannot be merged');
    const squash = body['squash'] === true || body['squash'] === 'true';
    const title = mr.title;
    let squashSha: string | null = null;
    let source = head;
    if (squash) {
      const base = (await p.repo.mergeBase(target, head)) ?? target;
      const message =
        typeof body['squash_commit_message'] === 'string' ? body['squash_commit_message'] : title;
      squashSha = await p.repo.commitTree(await p.repo.tree(head), [base], message);
      source = squashSha;
    }
    let newTarget: string;
    let mergeSha: string | null = null;
    if (p.mergeMethod === 'ff') {
      newTarget = source;
    } else {
      const tree = await p.repo.mergeTree(target, source);
      if (tree === null) throw new HttpError(406, 'Branch cannot be merged');
      const message =
        typeof body['merge_commit_message'] === 'string'
          ? body['merge_commit_message']
          : `Merge branch '${mr.sourceBranch}' into '${mr.targetBranch}'\n\n${title}\n\nSee merge request ${p.path}!${mr.iid}`;
      mergeSha = await p.repo.commitTree(tree, [target, source], message);
      newTarget = mergeSha;
    }
    if (!(await p.repo.cas(`refs/heads/${mr.targetBranch}`, newTarget, target))) {
      throw new HttpError(422, 'Merge failed: the target branch moved');
    }
    mr.state = 'merged';
    mr.frozenSha = head;
    mr.mergeCommitSha = mergeSha;
    mr.squashCommitSha = squashSha;
    const bot = this.user('mainline-bot');
    await this.#pushed(p, mr.targetBranch, target, newTarget, bot.username);
    this.#hook(p, 'merge_request', await this.#mrHook(p, mr, 'merge', bot));
    return { status: 200, json: await this.#mrJson(p, mr) };
  }
}

function pipelineStatus(latest: CommitStatus[]): string {
  const states = latest.map((s) => (s.status === 'failed' && s.allowFailure ? 'success' : s.status));
  if (states.includes('failed')) return 'failed';
  if (states.includes('canceled')) return 'canceled';
  if (states.includes('running')) return 'running';
  if (states.includes('pending') || states.includes('created')) return 'pending';
  return states.length === 0 ? 'created' : 'success';
}

function statusJson(s: CommitStatus) {
  return {
    id: s.id,
    sha: s.sha,
    ref: s.ref,
    status: s.status,
    name: s.name,
    target_url: s.targetUrl,
    description: s.description,
    allow_failure: s.allowFailure,
    pipeline_id: s.pipelineId,
    created_at: s.createdAt,
  };
}

function noteJson(n: Note) {
  return {
    id: n.id,
    body: n.body,
    author: { id: n.author.id, username: n.author.username },
    system: n.system,
    created_at: n.createdAt,
    noteable_type: 'MergeRequest',
  };
}

/** One page of a list with GitLab's offset-pagination headers. */
function page(rows: unknown[], query: Record<string, unknown>) {
  const perPage = Math.min(100, Math.max(1, Number(query['per_page'] ?? 20) || 20));
  const current = Math.max(1, Number(query['page'] ?? 1) || 1);
  const totalPages = Math.max(1, Math.ceil(rows.length / perPage));
  const slice = rows.slice((current - 1) * perPage, current * perPage);
  return {
    status: 200,
    json: slice,
    headers: {
      'x-page': String(current),
      'x-per-page': String(perPage),
      'x-total': String(rows.length),
      'x-total-pages': String(totalPages),
      'x-next-page': current < totalPages ? String(current + 1) : '',
      'x-prev-page': current > 1 ? String(current - 1) : '',
    },
  };
}
