import path from 'node:path';
import type { Credentials } from './auth.ts';
import { BareRepo, isBranchName } from './git.ts';
import { HttpError } from './http.ts';
import type {
  CheckRunState,
  CommentState,
  Delivery,
  JsonObject,
  ProtectionState,
  PullState,
  RulesetState,
  StatusRecord,
} from './types.ts';
import type { OutgoingEvent, WebhookSender } from './webhooks.ts';

export interface RepoState {
  id: number;
  owner: string;
  name: string;
  defaultBranch: string;
  git: BareRepo;
  nextNumber: number;
  pulls: Map<number, PullState>;
  comments: Map<number, CommentState>;
  statuses: StatusRecord[];
  checkRuns: Map<number, CheckRunState>;
  /** `${sha} ${appId}` → check suite id. */
  suites: Map<string, number>;
  protection: Map<string, ProtectionState>;
  rulesets: RulesetState[];
  /** Lower-cased login → role and author association (sim.setPermission); unset users are writers (MEMBER). */
  collaborators: Map<string, { role: CollaboratorRole; association: string }>;
}

/** A user's role on a repository, as GitHub's collaborator permission endpoint names it. */
export type CollaboratorRole = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

/** The role and author association of a user on a repository (bots: none). */
export function collaboratorOf(
  repo: RepoState,
  login: string,
): { role: CollaboratorRole; association: string } {
  const set = repo.collaborators.get(login.toLowerCase());
  if (set !== undefined) return set;
  return login.endsWith('[bot]')
    ? { role: 'none', association: 'NONE' }
    : { role: 'write', association: 'MEMBER' };
}

/** Webhooks a mutation produced; sent (in order) once the mutation is over. */
export class Tx {
  readonly events: OutgoingEvent[] = [];
}

/** A promise-chain mutex: one mutation (REST call or test driver step) at a time. */
class Mutex {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.catch(() => {});
    return result;
  }
}

export function isoNow(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Everything the simulator knows: repositories (each a bare git repository plus GitHub's metadata). */
export class Core {
  readonly repos = new Map<string, RepoState>();
  readonly #mutex = new Mutex();
  #nextId = 1;
  /** Base URL once listening. */
  base = '';

  constructor(
    readonly root: string,
    readonly credentials: Credentials,
    readonly webhooks: WebhookSender,
  ) {}

  nextId(): number {
    return this.#nextId++;
  }

  findRepo(owner: string, name: string): RepoState | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  /** The repository, or 404 Not Found. */
  repo(owner: string, name: string): RepoState {
    const repo = this.findRepo(owner, name);
    if (!repo) throw new HttpError(404, 'Not Found');
    return repo;
  }

  async createRepo(owner: string, name: string, defaultBranch: string): Promise<RepoState> {
    if (!/^[A-Za-z0-9_.-]+$/.test(owner) || !/^[A-Za-z0-9_.-]+$/.test(name) || name.startsWith('.')) {
      throw new Error(`invalid repository name ${owner}/${name}`);
    }
    if (!isBranchName(defaultBranch)) throw new Error(`invalid branch name ${defaultBranch}`);
    if (this.findRepo(owner, name)) throw new Error(`repository ${owner}/${name} already exists`);
    const git = await BareRepo.init(path.join(this.root, `${owner}--${name}.git`), defaultBranch);
    const repo: RepoState = {
      id: this.nextId(),
      owner,
      name,
      defaultBranch,
      git,
      nextNumber: 1,
      pulls: new Map(),
      comments: new Map(),
      statuses: [],
      checkRuns: new Map(),
      suites: new Map(),
      protection: new Map(),
      rulesets: [],
      collaborators: new Map(),
    };
    this.repos.set(`${owner}/${name}`.toLowerCase(), repo);
    this.credentials.installationId(owner);
    return repo;
  }

  /** Run fn alone; its webhooks are queued afterwards (delivered resolves when they were sent). */
  async mutate<T>(fn: (tx: Tx) => Promise<T>): Promise<{ value: T; delivered: Promise<Delivery[]> }> {
    const tx = new Tx();
    const value = await this.#mutex.run(() => fn(tx));
    return { value, delivered: this.webhooks.enqueue(tx.events) };
  }

  /** Queue a webhook about repo, adding repository, sender and (for apps) installation. */
  emit(tx: Tx, repo: RepoState, event: string, payload: JsonObject, sender: string): void {
    const app = this.credentials.app;
    const full: JsonObject = { ...payload, repository: this.repoJson(repo), sender: userJson(sender) };
    if (app) full['installation'] = { id: this.credentials.installationId(repo.owner) };
    tx.events.push({ event, payload: full });
  }

  repoJson(repo: RepoState): JsonObject {
    return {
      id: repo.id,
      node_id: `R_${repo.id}`,
      name: repo.name,
      full_name: `${repo.owner}/${repo.name}`,
      owner: { login: repo.owner, id: 1, type: 'Organization' },
      private: false,
      default_branch: repo.defaultBranch,
      html_url: `${this.base}/${repo.owner}/${repo.name}`,
      url: this.apiUrl(repo, ''),
    };
  }

  apiUrl(repo: RepoState, suffix: string): string {
    return `${this.base}/repos/${repo.owner}/${repo.name}${suffix}`;
  }

  htmlUrl(repo: RepoState, suffix: string): string {
    return `${this.base}/${repo.owner}/${repo.name}${suffix}`;
  }
}

export function userJson(login: string): JsonObject {
  const bot = login.endsWith('[bot]');
  return { login, id: stableId(login), type: bot ? 'Bot' : 'User' };
}

function stableId(text: string): number {
  let hash = 7;
  for (const c of text) hash = (hash * 31 + (c.codePointAt(0) ?? 0)) % 1_000_000_007;
  return hash;
}
