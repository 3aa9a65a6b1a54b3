import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Credentials } from './auth.ts';
import { FaultInjector } from './faults.ts';
import { authorFor } from './git.ts';
import { HttpError } from './http.ts';
import { SimulatorInspection } from './inspect.ts';
import { addStatus, createCheckRun } from './ops-checks.ts';
import { moveBranch } from './ops-git.ts';
import {
  addComment,
  closePull,
  findPull,
  type MergeRequest,
  mergePull,
  openPull,
  reopenPull,
} from './ops-pulls.ts';
import { addWorkflowRun, runsOf, type WorkflowRunOptions } from './routes-actions.ts';
import { addLabels, removeLabel } from './routes-labels.ts';
import { type ServerLog, startServer } from './server.ts';
import { type CollaboratorRole, Core, type RepoState, type Tx } from './state.ts';
import type {
  CheckConclusion,
  CompleteCheckOptions,
  CreateRepoOptions,
  Delivery,
  OpenPullRequestOptions,
  SetStatusOptions,
  SimulatorOptions,
} from './types.ts';
import { WebhookSender } from './webhooks.ts';

const CI_APP = { id: 15368, slug: 'github-actions' };

/** A GitHub REST API + webhooks simulator over real bare git repositories. Start with startGitHubSimulator. */
export class GitHubSimulator extends SimulatorInspection {
  /** Failures to inject into coming requests. */
  readonly faults: FaultInjector;
  readonly #server: Server;
  readonly #root: string;

  private constructor(core: Core, server: Server, root: string, faults: FaultInjector, log: ServerLog) {
    super(core, log);
    this.#server = server;
    this.#root = root;
    this.faults = faults;
  }

  static async start(options: SimulatorOptions): Promise<GitHubSimulator> {
    const root = await mkdtemp(path.join(tmpdir(), 'mainline-github-sim-'));
    const credentials = new Credentials(options);
    const webhooks = new WebhookSender(options.webhookUrl ?? null, options.webhookSecret);
    const core = new Core(root, credentials, webhooks);
    const faults = new FaultInjector();
    const log: ServerLog = { requests: [], errors: [] };
    const server = await startServer(core, faults, log);
    return new GitHubSimulator(core, server, root, faults, log);
  }

  setWebhookUrl(url: string | null): void {
    this.core.webhooks.url = url;
  }

  /** Installation tokens issued so far stop working (401), as when they expire. */
  expireInstallationTokens(): void {
    this.core.credentials.expireInstallationTokens();
  }

  async createRepo(owner: string, name: string, opts: CreateRepoOptions = {}) {
    const branch = opts.defaultBranch ?? 'main';
    const repo = await this.core.createRepo(owner, name, branch);
    const files = opts.files ?? { 'README.md': `# ${name}\n` };
    const sha = await repo.git.writeFiles(null, files, 'Initial commit', authorFor('dev'));
    await repo.git.setBranch(branch, sha, null);
    return { owner, name, defaultBranch: branch, gitDir: repo.git.dir };
  }

  /** Write files (null deletes) onto a branch as author, creating the branch from the default one; push webhook. */
  commit(
    owner: string,
    name: string,
    branch: string,
    files: Record<string, string | null>,
    message = 'Update files',
    author = 'dev',
  ): Promise<string> {
    return this.#run(owner, name, (repo, tx) => this.#commit(repo, tx, branch, files, message, author));
  }

  async #commit(
    repo: RepoState,
    tx: Tx,
    branch: string,
    files: Record<string, string | null>,
    message: string,
    author: string,
    from: string = repo.defaultBranch,
  ): Promise<string> {
    const current = await repo.git.branch(branch);
    const parent = current ?? (await repo.git.resolveRef(from));
    if (parent === null) throw new Error(`no branch ${branch} or ${from} in ${repo.owner}/${repo.name}`);
    const sha = await repo.git.writeFiles(parent, files, message, authorFor(author));
    if (
      !(await moveBranch(this.core, tx, repo, branch, sha, current, {
        pusher: author,
        bypassProtection: true,
      }))
    ) {
      throw new Error(`branch ${branch} moved meanwhile`);
    }
    return sha;
  }

  /** Point a branch at a commit (force push; creates or, with null, deletes it). */
  async forcePush(
    owner: string,
    name: string,
    branch: string,
    sha: string | null,
    pusher = 'dev',
  ): Promise<void> {
    await this.#run(owner, name, async (repo, tx) => {
      const current = await repo.git.branch(branch);
      await moveBranch(this.core, tx, repo, branch, sha, current, { pusher, bypassProtection: true });
    });
  }

  /** Open a PR (pull_request opened); returns its number. */
  openPullRequest(owner: string, name: string, opts: OpenPullRequestOptions): Promise<number> {
    return this.#run(owner, name, async (repo, tx) => {
      const base = opts.base ?? repo.defaultBranch;
      const author = opts.author ?? 'dev';
      if (opts.files) await this.#commit(repo, tx, opts.head, opts.files, opts.title, author, base);
      const pr = await openPull(this.core, tx, repo, {
        head: opts.head,
        base,
        title: opts.title,
        body: opts.body ?? null,
        draft: opts.draft ?? false,
        author,
      });
      return pr.number;
    });
  }

  /** Commit onto the PR's head branch (pull_request synchronize); returns the new head. */
  pushToPullRequest(
    owner: string,
    name: string,
    number: number,
    files: Record<string, string | null>,
    message = 'Update pull request',
  ): Promise<string> {
    return this.#run(owner, name, (repo, tx) => {
      const pr = findPull(repo, number);
      return this.#commit(repo, tx, pr.headRef, files, message, pr.author);
    });
  }

  closePullRequest(owner: string, name: string, number: number, actor = 'dev'): Promise<void> {
    return this.#run(owner, name, (repo, tx) =>
      closePull(this.core, tx, repo, findPull(repo, number), actor),
    );
  }

  reopenPullRequest(owner: string, name: string, number: number, actor = 'dev'): Promise<void> {
    return this.#run(owner, name, (repo, tx) =>
      reopenPull(this.core, tx, repo, findPull(repo, number), actor),
    );
  }

  /** Merge a PR as a person pressing the button would (branch protection applies); returns the new base head. */
  mergePullRequest(
    owner: string,
    name: string,
    number: number,
    opts: Partial<MergeRequest> & { actor?: string } = {},
  ): Promise<string> {
    return this.#run(owner, name, (repo, tx) =>
      mergePull(
        this.core,
        tx,
        repo,
        findPull(repo, number),
        {
          method: opts.method ?? 'merge',
          sha: opts.sha ?? null,
          title: opts.title ?? null,
          message: opts.message ?? null,
        },
        opts.actor ?? 'dev',
      ),
    );
  }

  /** The next `reads` REST reads of the PR answer mergeable: null, as while GitHub computes it. */
  setMergeableUnknown(owner: string, name: string, number: number, reads = 1): void {
    findPull(this.repoOf(owner, name), number).mergeableUnknownReads = reads;
  }

  /**
   * A user's role on the repository (GET …/collaborators/{username}/permission) and the author
   * association their comments carry (default: none → NONE, read/triage → COLLABORATOR, else MEMBER).
   * Users never set are writers (MEMBER).
   */
  setPermission(
    owner: string,
    name: string,
    login: string,
    role: CollaboratorRole,
    association?: string,
  ): void {
    const fallback =
      role === 'none' ? 'NONE' : role === 'read' || role === 'triage' ? 'COLLABORATOR' : 'MEMBER';
    this.repoOf(owner, name).collaborators.set(login.toLowerCase(), {
      role,
      association: association ?? fallback,
    });
  }

  /** A comment by author (issue_comment created); returns its id. */
  comment(owner: string, name: string, number: number, body: string, author = 'dev'): Promise<number> {
    return this.#run(
      owner,
      name,
      async (repo, tx) => addComment(this.core, tx, repo, number, body, author).id,
    );
  }

  /** A user adds a label to the PR (pull_request labeled, sent by actor); nothing when it has it already. */
  addLabel(owner: string, name: string, number: number, label: string, actor = 'dev'): Promise<void> {
    return this.#run(owner, name, (repo, tx) =>
      addLabels(this.core, tx, repo, findPull(repo, number), [label], actor),
    );
  }

  /** A user takes a label off the PR (pull_request unlabeled, sent by actor). */
  removeLabel(owner: string, name: string, number: number, label: string, actor = 'dev'): Promise<void> {
    return this.#run(owner, name, (repo, tx) =>
      removeLabel(this.core, tx, repo, findPull(repo, number), label, actor),
    );
  }

  /** As a CI app: a completed check run at ref (check_run created + completed, check_suite completed); returns its id. */
  completeCheck(owner: string, name: string, ref: string, opts: CompleteCheckOptions): Promise<number> {
    return this.#check(owner, name, ref, opts.name, opts.conclusion, opts);
  }

  /** As a CI app: an in-progress check run at ref (check_run created); returns its id. */
  startCheck(owner: string, name: string, ref: string, opts: Omit<CompleteCheckOptions, 'conclusion'>) {
    return this.#check(owner, name, ref, opts.name, null, opts);
  }

  #check(
    owner: string,
    name: string,
    ref: string,
    checkName: string,
    conclusion: CheckConclusion | null,
    opts: Omit<CompleteCheckOptions, 'conclusion' | 'name'>,
  ): Promise<number> {
    return this.#run(owner, name, async (repo, tx) => {
      const app = opts.app ?? CI_APP;
      const run = await createCheckRun(
        this.core,
        tx,
        repo,
        {
          name: checkName,
          headSha: await this.shaOf(repo, ref),
          status: conclusion === null ? 'in_progress' : 'completed',
          conclusion,
          detailsUrl: opts.detailsUrl ?? null,
          externalId: null,
          output: { title: opts.output?.title ?? null, summary: opts.output?.summary ?? null, text: null },
        },
        app,
        `${app.slug}[bot]`,
      );
      return run.id;
    });
  }

  /**
   * A GitHub Actions run of the repository at opts.headSha (a commit or ref), in progress unless said:
   * what GET …/actions/runs/{id} answers (a fork's pull_request run: headRepository names the fork).
   * Returns its id.
   */
  async startWorkflowRun(owner: string, name: string, opts: WorkflowRunOptions): Promise<number> {
    const repo = this.repoOf(owner, name);
    return addWorkflowRun(this.core, repo, await this.shaOf(repo, opts.headSha), opts);
  }

  /** The run finishes (status completed, conclusion success unless said). */
  completeWorkflowRun(owner: string, name: string, id: number, conclusion = 'success'): void {
    const run = runsOf(this.repoOf(owner, name)).get(id);
    if (run === undefined) throw new Error(`no workflow run ${id} in ${owner}/${name}`);
    run.status = 'completed';
    run.conclusion = conclusion;
  }

  /** A commit status at ref (status webhook). */
  setStatus(owner: string, name: string, ref: string, opts: SetStatusOptions): Promise<void> {
    return this.#run(owner, name, async (repo, tx) => {
      const sha = await this.shaOf(repo, ref);
      const req = {
        state: opts.state,
        context: opts.context,
        targetUrl: opts.targetUrl ?? null,
        description: opts.description ?? null,
      };
      await addStatus(this.core, tx, repo, sha, req, opts.creator ?? 'ci-bot');
    });
  }

  /** Branch protection with required status checks; enforced on PR merges and ref updates unless enforce: false. */
  protectBranch(
    owner: string,
    name: string,
    branch: string,
    opts: { contexts: string[]; strict?: boolean; enforce?: boolean },
  ) {
    const protection = {
      contexts: [...opts.contexts],
      strict: opts.strict ?? false,
      enforce: opts.enforce ?? true,
    };
    this.repoOf(owner, name).protection.set(branch, protection);
  }

  unprotectBranch(owner: string, name: string, branch: string): void {
    this.repoOf(owner, name).protection.delete(branch);
  }

  /** A ruleset requiring status checks on branch (a name or a `*` glob); returns its id. */
  setRuleset(
    owner: string,
    name: string,
    branch: string,
    opts: { contexts: string[]; enforce?: boolean },
  ): number {
    const id = this.core.nextId();
    this.repoOf(owner, name).rulesets.push({
      id,
      branch,
      contexts: [...opts.contexts],
      enforce: opts.enforce ?? true,
    });
    return id;
  }

  clearRulesets(owner: string, name: string): void {
    this.repoOf(owner, name).rulesets.length = 0;
  }

  /** Re-send a delivery exactly (same id, body, signature); the new attempt is appended to deliveries. */
  redeliver(id: string): Promise<Delivery> {
    return this.core.webhooks.redeliver(id);
  }

  /** Send any body (objects as JSON) as event; signature defaults to the valid one. */
  sendRaw(event: string, body: unknown, opts: { signature?: string } = {}): Promise<Delivery> {
    return this.core.webhooks.sendRaw(event, body, opts.signature);
  }

  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    await rm(this.#root, { recursive: true, force: true });
  }

  /** A test-driver step: alone, then its webhooks delivered (awaited). HttpErrors become plain errors. */
  async #run<T>(owner: string, name: string, fn: (repo: RepoState, tx: Tx) => Promise<T>): Promise<T> {
    const repo = this.repoOf(owner, name);
    try {
      const { value, delivered } = await this.core.mutate((tx) => fn(repo, tx));
      await delivered;
      return value;
    } catch (error) {
      if (error instanceof HttpError) throw new Error(`${error.status} ${error.message}`);
      throw error;
    }
  }
}

/** Start a simulator listening on 127.0.0.1 (random port). Close it with `await sim.close()`. */
export function startGitHubSimulator(options: SimulatorOptions): Promise<GitHubSimulator> {
  return GitHubSimulator.start(options);
}
