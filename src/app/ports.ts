import type { FlakeProtection } from '../domain/flake-protection.ts';
import type { WorkflowRun } from '../domain/fork-run.ts';
import type { Mergeability, MergeMethod, PrState } from '../domain/queue/index.ts';

/** A repository as the forge addresses it (the stored repository row fits). */
export interface ForgeRepo {
  readonly id: string;
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}

/** What the forge knows about a pull request. */
export interface ForgePullRequest {
  readonly number: number;
  readonly title: string;
  readonly author: string;
  readonly headSha: string;
  readonly headBranch: string;
  readonly baseBranch: string;
  /** Where the PR's branch forked from the base (merge base), for direct merges. */
  readonly baseSha: string;
  readonly mergeability: Mergeability;
  readonly state: 'open' | 'closed' | 'merged';
}

export type BuildOutcome =
  /** The test branch points at sha: the base with every PR head merged in order. */
  | { readonly ok: true; readonly sha: string }
  /** Merging conflictPr (null: not a conflict) failed; reason says what happened. */
  | { readonly ok: false; readonly conflictPr: number | null; readonly reason: string };

export type MergeOutcome =
  /** The PR is on the target branch, which is now at newTargetSha. */
  | { readonly ok: true; readonly newTargetSha: string }
  /**
   * Refused: conflict, head moved, target moved meanwhile; reason says which. targetMovedTo: refused
   * only because the target is not at the expected tip but at this commit (nothing merged).
   */
  | { readonly ok: false; readonly reason: string; readonly targetMovedTo?: string }
  /**
   * Not merged yet, and nothing refused: the forge will merge on its own once something it waits for
   * is done (GitLab: the pipeline of the merge request's rebased head, with auto-merge set). The same
   * merge is asked again later, which answers ok only once the forge reports the PR merged at the
   * head asked for; reason says what it waits for. Only the GitLab forge answers this.
   */
  | { readonly ok: 'pending'; readonly reason: string };

/** What to merge: the PR at headSha onto targetBranch, and only while it is at expectedTargetSha. */
export interface MergeInput {
  readonly targetBranch: string;
  readonly prNumber: number;
  readonly prTitle: string;
  readonly headSha: string;
  readonly method: MergeMethod;
  /**
   * The target tip the PR was proven on. The forge refuses (targetMovedTo) when the target is
   * elsewhere, unless the PR already merged there (a repeated merge whose answer was lost);
   * absent: no such check.
   */
  readonly expectedTargetSha?: string;
  /**
   * The merge has waited (ok 'pending') as long as it may: answer ok or ok:false, never pending
   * again; a forge that asked for a merge later withdraws that request.
   */
  readonly finalAttempt?: boolean;
}

/**
 * The narrow interface through which the merge queue acts on a git host: the plain-git forge over
 * bare repositories on disk today, GitHub later. Every method is safe to repeat.
 */
export interface Forge {
  head(repo: ForgeRepo, branch: string): Promise<string | null>;
  pullRequest(repo: ForgeRepo, number: number): Promise<ForgePullRequest | null>;
  /**
   * What `pullRequest` answers for each of several PRs, read together (the plain-git forge reads all
   * branch heads with one git process); absent where one by one is as cheap.
   */
  pullRequests?(repo: ForgeRepo, numbers: readonly number[]): Promise<Map<number, ForgePullRequest | null>>;
  buildTestBranch(
    repo: ForgeRepo,
    input: { testBranch: string; baseSha: string; prHeads: readonly { number: number; sha: string }[] },
  ): Promise<BuildOutcome>;
  mergePullRequest(repo: ForgeRepo, input: MergeInput): Promise<MergeOutcome>;
  deleteBranch(repo: ForgeRepo, branch: string): Promise<void>;
  /** Required statuses from the repository's `.mainline.yaml` and from branch protection (null: none). */
  requiredStatuses(
    repo: ForgeRepo,
    branch: string,
  ): Promise<{
    serviceConfig: string[] | null;
    branchProtection: string[] | null;
    /** The file's flake protection setting (null: not set). */
    flakeProtection: FlakeProtection | null;
  }>;
  /** Tell the PR's author where it stands (status check, comment); a no-op where the forge has no such thing. */
  reportPrState(repo: ForgeRepo, input: PrStateReport): Promise<void>;
  /**
   * Opens a draft pull request for a test branch (createPrsForTestingBranches) and answers its number;
   * null (or the method absent) where the repository's forge has no pull requests to open.
   */
  createDraftPullRequest?(
    repo: ForgeRepo,
    input: { testBranch: string; base: string; title: string; body: string },
  ): Promise<number | null>;
  /**
   * How often the runner compares a queue with the forge (target head, PR heads). Absent: every few
   * seconds (plain git tells nothing). A forge with webhooks polls rarely, as a safety net for lost ones.
   */
  pollIntervalMs?(repo: ForgeRepo): number | undefined;
  /** Closes a pull request (a test branch's draft); absent where the forge has none. */
  closePullRequest?(repo: ForgeRepo, number: number): Promise<void>;
  /**
   * Takes a label off a pull request (the enqueueing label once the queue picked the PR up); a label
   * that is not there is no error. Absent where the forge has no labels.
   */
  removeLabel?(repo: ForgeRepo, number: number, label: string): Promise<void>;
  /**
   * A user's role on the repository (GitHub: admin, maintain, write, triage, read or none), for
   * deciding whether a PR comment's command may drive the queue; absent where the forge has no users.
   */
  collaboratorPermission?(repo: ForgeRepo, login: string): Promise<string>;
  /**
   * A CI workflow run of the repository (GitHub Actions), null when the forge has no such run there;
   * verifies a fork PR's x-forked-workflow-run-id. Absent where the forge has no CI runs.
   */
  workflowRun?(repo: ForgeRepo, runId: number): Promise<WorkflowRun | null>;
}

/**
 * The plain-git forge, which hosts the bare repositories users push to: it can say whether a name can
 * be a repository on this server and create one.
 */
export interface RepositoryHostingForge extends Forge {
  /** Why this host/owner/name cannot be a repository folder on this server; null when it can. */
  unusableName(repo: { host: string; owner: string; name: string }): string | null;
  /** Creates the repository's bare repository if absent and answers its path. */
  ensureRepository(repo: ForgeRepo): Promise<string>;
}

/** A commit's status by name as the forge reads it, in commit-status states. */
export interface CommitStatusReading {
  readonly name: string;
  readonly state: 'pending' | 'success' | 'failure' | 'error';
  readonly url: string | null;
}

/**
 * What GitLab's webhook processing asks of the GitLab forge beyond the queue's Forge: the statuses on
 * a commit (pipeline and job events name only the commit) and a note author's role by user id.
 */
export interface GitLabEventForge {
  commitStatuses(repo: ForgeRepo, sha: string): Promise<CommitStatusReading[]>;
  /** The role (as collaboratorPermission names it) of a user by GitLab's user id. */
  accessRole(repo: ForgeRepo, userId: number): Promise<string>;
}

/** Several PRs as `forge.pullRequests` reads them together, or one by one where it cannot. */
export async function pullRequestsOf(
  forge: Forge,
  repo: ForgeRepo,
  numbers: readonly number[],
): Promise<Map<number, ForgePullRequest | null>> {
  if (forge.pullRequests !== undefined) return forge.pullRequests(repo, numbers);
  const out = new Map<number, ForgePullRequest | null>();
  for (const number of numbers) out.set(number, await forge.pullRequest(repo, number));
  return out;
}

export interface PrStateReport {
  prNumber: number;
  headSha: string;
  state: PrState;
  reason: string;
  /** Upsert the PR's one status comment (the queue's commentsEnabled). */
  comments?: boolean;
  /** Set a commit status on the PR's head (the queue's statusCheckEnabled). */
  statusCheck?: boolean;
  /** More words for the comment, e.g. why the PR merged although a test failed (flake protection). */
  details?: string;
  /** Where the status links to. */
  targetUrl?: string;
  /** Keep the PR's one `mainline:` state label current (the queue's stateLabelsEnabled); default off. */
  stateLabels?: boolean;
}

/** Which forge serves a repository host: the GitLab host first (it wins over an equal GitHub host), then GitHub, else plain git. */
export type ForgeKind = 'github' | 'gitlab' | 'git';

export function forgeKindOf(
  host: string,
  hosts: { readonly github: string | undefined; readonly gitlab: string | undefined },
): ForgeKind {
  const h = host.toLowerCase();
  if (hosts.gitlab !== undefined && h === hosts.gitlab.toLowerCase()) return 'gitlab';
  if (hosts.github !== undefined && h === hosts.github.toLowerCase()) return 'github';
  return 'git';
}
