import { existsSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Kysely } from 'kysely';
import type {
  BuildOutcome,
  Forge,
  ForgePullRequest,
  ForgeRepo,
  MergeInput,
  MergeOutcome,
  RepositoryHostingForge,
} from '../app/ports.ts';
import { Lru } from '../lib/lru.ts';
import { findPullRequest, type GitPullRequestRow, setPullRequestState } from '../store/forge/git-prs.ts';
import type { Tables } from '../store/schema.ts';
import { oldestRepoIdNamed } from '../store/tenancy/repos.ts';
import { GitForge, GitInputError, type MergeBases, type RefNames } from './git/index.ts';

type RequiredStatuses = Awaited<ReturnType<Forge['requiredStatuses']>>;

/** `.mainline.yaml` readings by repository and branch, each valid while the branch head is `head`. */
export type BranchSettings = Lru<{ readonly head: string; readonly value: RequiredStatuses }>;

/** What the plain-git forge remembers: the app's (app/caches.ts); a forge made without one keeps its own. */
export interface GitForgeCaches {
  readonly mergeBases?: MergeBases;
  readonly gitRefNames?: RefNames;
  readonly gitBranchSettings?: BranchSettings;
}

/** Branches a forge made without the app's cache remembers (MAINLINE_GIT_BRANCH_CACHE's default). */
const DEFAULT_BRANCH_SETTINGS = 1000;

/**
 * The plain-git forge: pull requests are registered through Mainline's API (a head branch in the
 * bare repository), CI reports statuses through the API, and git work happens in bare repositories
 * under `root` (`<repository id>/<host>/<owner>/<name>.git`), which users push to.
 */
export class GitRepositoryForge implements RepositoryHostingForge {
  readonly git: GitForge;
  readonly #db: Kysely<Tables>;
  readonly #now: () => number;
  readonly #required: BranchSettings;

  constructor(options: { root: string; db: Kysely<Tables>; now?: () => number; caches?: GitForgeCaches }) {
    const { mergeBases, gitRefNames, gitBranchSettings } = options.caches ?? {};
    this.git = new GitForge({
      root: options.root,
      ...(mergeBases === undefined ? {} : { mergeBases }),
      ...(gitRefNames === undefined ? {} : { refNames: gitRefNames }),
    });
    this.#db = options.db;
    this.#now = options.now ?? Date.now;
    this.#required = gitBranchSettings ?? new Lru(DEFAULT_BRANCH_SETTINGS);
  }

  /**
   * Whether the repository's bare repository exists (an unusable name means it cannot). A bare
   * repository in the layout before per-repository folders (`<root>/<host>/<owner>/<name>.git`) is
   * moved into the folder of the oldest Mainline repository with that name, its first user.
   */
  async #exists(repo: ForgeRepo): Promise<boolean> {
    let path: string;
    try {
      path = this.git.repoPath(repo);
    } catch (error) {
      if (error instanceof GitInputError) return false;
      throw error;
    }
    if (existsSync(path)) return true;
    const legacy = this.git.repoPath({ host: repo.host, owner: repo.owner, name: repo.name });
    if (!existsSync(legacy)) return false;
    if ((await oldestRepoIdNamed(this.#db, repo)) !== repo.id) return false;
    await mkdir(dirname(path), { recursive: true });
    await rename(legacy, path).catch((error: NodeJS.ErrnoException) => {
      if (!existsSync(path)) throw error;
    });
    return true;
  }

  unusableName(repo: { host: string; owner: string; name: string }): string | null {
    try {
      this.git.repoPath(repo);
      return null;
    } catch (error) {
      if (error instanceof GitInputError) return error.message;
      throw error;
    }
  }

  /** Creates the repository's bare repository (after adopting a legacy one) and returns its path. */
  async ensureRepository(repo: ForgeRepo): Promise<string> {
    await this.#exists(repo);
    return this.git.ensureRepository(repo);
  }

  async head(repo: ForgeRepo, branch: string): Promise<string | null> {
    return (await this.#exists(repo)) ? this.git.head(repo, branch) : null;
  }

  async pullRequest(repo: ForgeRepo, number: number): Promise<ForgePullRequest | null> {
    const row = await findPullRequest(this.#db, repo.id, number);
    if (row === undefined || !(await this.#exists(repo))) return null;
    const headSha = await this.git.head(repo, row.head_branch);
    if (headSha === null) return null;
    return this.#record(repo, row, headSha, await this.git.head(repo, row.base_branch));
  }

  /**
   * Several pull requests, their branches read with one git process: what `pullRequest` answers for
   * each. A PR whose head branch is not among them (deleted, or not a plain commit) is left to
   * `pullRequest` itself.
   */
  async pullRequests(
    repo: ForgeRepo,
    numbers: readonly number[],
  ): Promise<Map<number, ForgePullRequest | null>> {
    const out = new Map<number, ForgePullRequest | null>();
    if (numbers.length === 0) return out;
    if (!(await this.#exists(repo))) {
      for (const number of numbers) out.set(number, null);
      return out;
    }
    const heads = await this.git.commitBranches(repo);
    for (const number of numbers) {
      const row = await findPullRequest(this.#db, repo.id, number);
      const headSha = row === undefined ? undefined : heads.get(row.head_branch);
      if (row === undefined || headSha === undefined) {
        out.set(number, row === undefined ? null : await this.pullRequest(repo, number));
        continue;
      }
      const target = heads.get(row.base_branch) ?? (await this.git.head(repo, row.base_branch));
      out.set(number, await this.#record(repo, row, headSha, target));
    }
    return out;
  }

  async #record(
    repo: ForgeRepo,
    row: GitPullRequestRow,
    headSha: string,
    target: string | null,
  ): Promise<ForgePullRequest> {
    const baseSha = target === null ? headSha : ((await this.git.mergeBase(repo, target, headSha)) ?? target);
    return {
      number: row.number,
      title: row.title,
      author: row.author,
      headSha,
      headBranch: row.head_branch,
      baseBranch: row.base_branch,
      baseSha,
      mergeability: row.state === 'open' ? 'mergeable' : 'not_mergeable',
      state: row.state as ForgePullRequest['state'],
    };
  }

  buildTestBranch(
    repo: ForgeRepo,
    input: { testBranch: string; baseSha: string; prHeads: readonly { number: number; sha: string }[] },
  ): Promise<BuildOutcome> {
    return this.git.buildTestBranch(repo, {
      testBranch: input.testBranch,
      baseSha: input.baseSha,
      prHeads: [...input.prHeads],
    });
  }

  async mergePullRequest(repo: ForgeRepo, input: MergeInput): Promise<MergeOutcome> {
    // The compare-and-swap on the target (expectedTargetSha) is git's: see forge/git/merge.ts.
    const result = await this.git.mergePullRequest(repo, { ...input });
    if (result.ok) await setPullRequestState(this.#db, repo.id, input.prNumber, 'merged', this.#now());
    return result;
  }

  async deleteBranch(repo: ForgeRepo, branch: string): Promise<void> {
    if (await this.#exists(repo)) await this.git.deleteBranch(repo, branch);
  }

  /**
   * Required statuses and flake protection from `.mainline.yaml` at the branch head. Remembered per
   * branch position (the ref's value, read from the ref files without starting git), so reads (getQueue,
   * the dashboard) cost a file read instead of a git process.
   */
  async requiredStatuses(repo: ForgeRepo, branch: string): Promise<RequiredStatuses> {
    const none: RequiredStatuses = { serviceConfig: null, branchProtection: null, flakeProtection: null };
    if (!(await this.#exists(repo))) return none;
    const head = await this.git.tip(repo, branch);
    const key = `${repo.id}\u0000${branch}`;
    const known = this.#required.get(key);
    if (known !== undefined && head !== null && known.head === head) return known.value;
    const read = await this.git.readRequiredStatuses(repo, branch);
    const value: RequiredStatuses = read.ok
      ? { serviceConfig: read.serviceConfig, branchProtection: null, flakeProtection: read.flakeProtection }
      : none;
    if (head !== null) this.#required.set(key, { head, value });
    return value;
  }

  /** Plain git has no status checks or comments on pull requests: the API and dashboard show the state. */
  async reportPrState(): Promise<void> {}
}
