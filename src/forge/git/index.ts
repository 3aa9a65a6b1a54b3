import { Lru } from '../../lib/lru.ts';
import { type RequiredStatusesResult, readRequiredStatuses } from './config-file.ts';
import {
  DEFAULT_IDENTITY,
  DEFAULT_TIMEOUT_MS,
  type GitContext,
  type GitIdentity,
  type RefNames,
} from './git.ts';
import {
  type MergeRequest,
  type MergeResult,
  mergePullRequest,
  type PreparedMerge,
  prepareMerge,
} from './merge.ts';
import { assertSha } from './names.ts';
import { type MergeBases, mergeBase } from './objects.ts';
import {
  type BranchHead,
  branchHead,
  branchTip,
  casBranch,
  commitBranches,
  deleteBranch,
  ensureRepository,
  listBranches,
  type RefUpdate,
  type RepoId,
  repoPath,
  resolveRef,
} from './repos.ts';
import { buildTestBranch, type TestBranchResult, type TestBranchSpec } from './test-branch.ts';

export { CONFIG_FILE, parseMainlineConfig, type RequiredStatusesResult } from './config-file.ts';
export { GitCommandError, type GitIdentity, GitInputError, type RefNames } from './git.ts';
export type { MergeRequest, MergeResult, PreparedMerge } from './merge.ts';
export { isSha } from './names.ts';
export type { MergeBases } from './objects.ts';
export type { BranchHead, RefUpdate, RepoId } from './repos.ts';
export type { TestBranchResult, TestBranchSpec } from './test-branch.ts';

/** Merge bases a forge made without the app's cache remembers (MAINLINE_MERGE_BASE_CACHE's default). */
const DEFAULT_MERGE_BASES = 10_000;
/** Branch names a forge made without the app's cache remembers (MAINLINE_GIT_BRANCH_CACHE's default). */
const DEFAULT_REF_NAMES = 1000;

export interface GitForgeOptions {
  /** Folder holding `<host>/<owner>/<name>.git` bare repositories. */
  root: string;
  /** Committer of every commit Mainline writes (default Mainline <mainline@localhost>). */
  identity?: GitIdentity;
  /** Kill any single git command after this long (default 60 s). */
  timeoutMs?: number;
  /** Merge bases remembered (the app's, app/caches.ts); a forge made without one keeps its own. */
  mergeBases?: MergeBases;
  /** Branch names git accepted (the app's, app/caches.ts); a forge made without one keeps its own. */
  refNames?: RefNames;
}

/**
 * Merge-queue operations on bare repositories on disk, with the git CLI and no working tree.
 * Invalid names or SHAs throw GitInputError; unexpected git failures throw GitCommandError;
 * expected failures (conflicts, target moved, unknown commits) are returned as `{ ok: false }`.
 */
export class GitForge {
  readonly root: string;
  private readonly identity: GitIdentity;
  private readonly timeoutMs: number;
  private readonly mergeBases: MergeBases;
  private readonly refNames: RefNames;

  constructor(options: GitForgeOptions) {
    this.root = options.root;
    this.identity = options.identity ?? DEFAULT_IDENTITY;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.mergeBases = options.mergeBases ?? new Lru(DEFAULT_MERGE_BASES);
    this.refNames = options.refNames ?? new Lru(DEFAULT_REF_NAMES);
  }

  /** `<root>/<id>/<host>/<owner>/<name>.git` (see repoPath); throws GitInputError for unsafe segments. */
  repoPath(repo: RepoId): string {
    return repoPath(this.root, repo);
  }

  /** Create the bare repository (default branch main) if absent; returns its path (users push there). */
  async ensureRepository(repo: RepoId): Promise<string> {
    const ctx = this.context(repo);
    await ensureRepository(ctx);
    return ctx.gitDir;
  }

  /** Head commit of branch, or null when it does not exist. */
  async head(repo: RepoId, branch: string): Promise<string | null> {
    return branchHead(this.context(repo), branch);
  }

  /** The object branch names, read without starting git when its ref files allow; null when absent. */
  async tip(repo: RepoId, branch: string): Promise<string | null> {
    return branchTip(this.context(repo), branch);
  }

  /** Commit named by a full SHA or a branch name, or null when absent. */
  async resolve(repo: RepoId, ref: string): Promise<string | null> {
    return resolveRef(this.context(repo), ref);
  }

  /** Best common ancestor of two commits (full SHAs), or null when they share no history. */
  async mergeBase(repo: RepoId, a: string, b: string): Promise<string | null> {
    return mergeBase(this.context(repo), assertSha(a, 'a'), assertSha(b, 'b'), this.mergeBases);
  }

  /** Merge PR heads in order onto baseSha and force testBranch to the result. */
  async buildTestBranch(repo: RepoId, spec: TestBranchSpec): Promise<TestBranchResult> {
    return buildTestBranch(this.context(repo), spec);
  }

  /** Merge a PR into its target with the given method; the target moves only if nobody pushed meanwhile. */
  async mergePullRequest(repo: RepoId, request: MergeRequest): Promise<MergeResult> {
    return mergePullRequest(this.context(repo), request);
  }

  /** First half of mergePullRequest: compute the new target commit without moving any ref. */
  async prepareMerge(repo: RepoId, request: MergeRequest): Promise<PreparedMerge> {
    return prepareMerge(this.context(repo), request);
  }

  /** Second half: move branch from oldSha to newSha atomically (fails if it is elsewhere). */
  async advanceBranch(repo: RepoId, branch: string, newSha: string, oldSha: string): Promise<RefUpdate> {
    return casBranch(this.context(repo), branch, newSha, oldSha);
  }

  /** Delete a branch; an absent branch is fine. */
  async deleteBranch(repo: RepoId, branch: string): Promise<void> {
    return deleteBranch(this.context(repo), branch);
  }

  /** Every branch pointing at a commit, by name, read at once. */
  async commitBranches(repo: RepoId): Promise<Map<string, string>> {
    return commitBranches(this.context(repo));
  }

  /** Branches whose names start with prefix (e.g. "trunk-merge/"), for sweeping stale test branches. */
  async listBranches(repo: RepoId, prefix: string): Promise<BranchHead[]> {
    return listBranches(this.context(repo), prefix);
  }

  /** Required statuses from `.mainline.yaml` at the branch head (null: no file or no key). */
  async readRequiredStatuses(repo: RepoId, branch: string): Promise<RequiredStatusesResult> {
    return readRequiredStatuses(this.context(repo), branch);
  }

  private context(repo: RepoId): GitContext {
    return {
      gitDir: repoPath(this.root, repo),
      identity: this.identity,
      timeoutMs: this.timeoutMs,
      refNames: this.refNames,
    };
  }
}
