/**
 * Which CI is running and what it is building, read from environment variables. Pure: the
 * environment, a git runner and a file reader are passed in, so tests can describe any CI.
 */

export type Env = Readonly<Record<string, string | undefined>>;

export type CiProvider =
  | 'github'
  | 'gitlab'
  | 'buildkite'
  | 'circleci'
  | 'jenkins'
  | 'azure'
  | 'bitbucket'
  | 'local';

export interface RepoRef {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}

export interface CiContext {
  provider: CiProvider;
  repo?: RepoRef;
  branch?: string;
  commitSha?: string;
  prNumber?: number;
  prTitle?: string;
  jobName?: string;
  jobUrl?: string;
  runAttempt?: number;
}

/** Runs `git <args>` and returns its trimmed stdout, or undefined when git fails. */
export type GitRunner = (args: readonly string[]) => string | undefined;

export interface DetectOptions {
  readonly git?: GitRunner;
  /** Reads a file as text (for GITHUB_EVENT_PATH); undefined when it cannot be read. */
  readonly readFile?: (path: string) => string | undefined;
}

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function positiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= 1 && Number.isSafeInteger(n) ? n : undefined;
}

function wholeNumber(raw: string | undefined): number | undefined {
  return raw === '0' ? 0 : positiveInt(raw);
}

/** `{host, owner, name}` from a path `owner[/subgroup…]/name` on a host; undefined if too short. */
function repoFromPath(host: string, repoPath: string): RepoRef | undefined {
  const parts = repoPath
    .replace(/\.git\/?$/, '')
    .split('/')
    .filter((p) => p !== '');
  const name = parts.pop();
  if (name === undefined || parts.length === 0 || host === '') return undefined;
  return { host: host.toLowerCase(), owner: parts.join('/'), name };
}

/**
 * The repository a git remote URL points at: https/http/git/ssh URLs (ports and credentials
 * dropped) and scp-like `user@host:owner/name.git`. GitLab subgroups stay in the owner.
 */
export function parseGitRemote(url: string): RepoRef | undefined {
  const trimmed = url.trim();
  const withScheme = trimmed.match(/^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?([^/:]+)(?::\d*)?\/(.+)$/i);
  if (withScheme?.[1] !== undefined && withScheme[2] !== undefined) {
    return repoFromPath(withScheme[1], withScheme[2]);
  }
  const scpLike = trimmed.match(/^(?:[^@/]+@)?([^/:]+):(?!\/)(.+)$/);
  if (scpLike?.[1] !== undefined && scpLike[2] !== undefined) return repoFromPath(scpLike[1], scpLike[2]);
  return undefined;
}

/**
 * The ref CI checks a pull or merge request out at, not a branch anyone pushed: refs/pull/42/merge
 * (GitHub, Azure), refs/remotes/pull/42/merge (what git records for that checkout), 42/merge
 * (GITHUB_REF_NAME), refs/merge-requests/12/head (GitLab), pull/42 (CircleCI, forked PRs).
 * Group 1 or 2 is the request's number.
 */
const MERGE_REF =
  /^(?:refs\/)?(?:remotes\/)?(?:(?:pull|merge-requests)\/)?(\d+)\/(?:merge|head)$|^(?:refs\/)?(?:remotes\/)?pull\/(\d+)$/;

/** The pull/merge request a merge ref names (refs/pull/42/merge → 42); undefined for anything else. */
export function pullRequestOfRef(ref: string | undefined): number | undefined {
  const m = ref?.trim().match(MERGE_REF);
  return positiveInt(m?.[1] ?? m?.[2]);
}

/**
 * A branch name from what CI or git says: refs/heads/ and refs/remotes/<remote>/ dropped. A merge
 * ref is no branch (storing "42/merge" split a PR's results away from its branch): undefined.
 */
export function branchName(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (value === undefined || value === '' || MERGE_REF.test(value)) return undefined;
  const name = value.replace(/^refs\/heads\//, '').replace(/^refs\/remotes\/[^/]+\//, '');
  return name === '' || MERGE_REF.test(name) ? undefined : name;
}

/** The first candidate that is a branch name (see branchName). */
function firstBranch(...candidates: (string | undefined)[]): string | undefined {
  for (const candidate of candidates) {
    const name = branchName(candidate);
    if (name !== undefined) return name;
  }
  return undefined;
}

/** The last number in a pull-request URL such as https://github.com/acme/web/pull/42. */
function prNumberFromUrl(url: string | undefined): number | undefined {
  return positiveInt(url?.match(/\/(\d+)\/?$/)?.[1]);
}

interface GithubPullRequest {
  number?: unknown;
  title?: unknown;
  head?: { sha?: unknown };
}

function githubEvent(env: Env, options: DetectOptions): GithubPullRequest | undefined {
  const eventPath = read(env, 'GITHUB_EVENT_PATH');
  if (eventPath === undefined || options.readFile === undefined) return undefined;
  try {
    const text = options.readFile(eventPath);
    const event = text === undefined ? undefined : (JSON.parse(text) as { pull_request?: GithubPullRequest });
    return event?.pull_request ?? undefined;
  } catch {
    return undefined;
  }
}

function github(env: Env, options: DetectOptions): CiContext {
  const pr = githubEvent(env, options);
  const host = read(env, 'GITHUB_SERVER_URL')?.match(/^https?:\/\/([^/:]+)/)?.[1] ?? 'github.com';
  const repository = read(env, 'GITHUB_REPOSITORY');
  const server = read(env, 'GITHUB_SERVER_URL') ?? 'https://github.com';
  const runId = read(env, 'GITHUB_RUN_ID');
  const ref = read(env, 'GITHUB_REF');
  return {
    provider: 'github',
    repo: repository === undefined ? undefined : repoFromPath(host, repository),
    // On pull_request events GITHUB_SHA is a temporary merge commit; the head commit is the PR's.
    commitSha: typeof pr?.head?.sha === 'string' ? pr.head.sha : read(env, 'GITHUB_SHA'),
    // On pull_request events GITHUB_REF is the merge ref and GITHUB_HEAD_REF the PR's branch; the
    // analytics CLI sends GITHUB_REF but not GITHUB_REF_NAME, so a push's refs/heads/x counts too.
    branch: firstBranch(
      read(env, 'GITHUB_HEAD_REF'),
      read(env, 'GITHUB_REF_NAME'),
      ref?.startsWith('refs/heads/') ? ref : undefined,
    ),
    prNumber: pullRequestOfRef(ref) ?? (typeof pr?.number === 'number' ? pr.number : undefined),
    prTitle: typeof pr?.title === 'string' ? pr.title : undefined,
    jobName: read(env, 'GITHUB_JOB'),
    jobUrl:
      repository !== undefined && runId !== undefined
        ? `${server.replace(/\/+$/, '')}/${repository}/actions/runs/${runId}`
        : undefined,
    runAttempt: wholeNumber(read(env, 'GITHUB_RUN_ATTEMPT')),
  };
}

function gitlab(env: Env): CiContext {
  const host = read(env, 'CI_SERVER_HOST');
  const projectPath = read(env, 'CI_PROJECT_PATH');
  return {
    provider: 'gitlab',
    repo: host !== undefined && projectPath !== undefined ? repoFromPath(host, projectPath) : undefined,
    // Merged-results pipelines build a merge commit; the source branch's head is the MR's commit.
    commitSha: read(env, 'CI_MERGE_REQUEST_SOURCE_BRANCH_SHA') ?? read(env, 'CI_COMMIT_SHA'),
    branch: firstBranch(
      read(env, 'CI_MERGE_REQUEST_SOURCE_BRANCH_NAME'),
      read(env, 'CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_NAME'),
      read(env, 'CI_COMMIT_BRANCH'),
      read(env, 'CI_COMMIT_REF_NAME'),
    ),
    prNumber:
      positiveInt(read(env, 'CI_MERGE_REQUEST_IID')) ??
      positiveInt(read(env, 'CI_EXTERNAL_PULL_REQUEST_IID')) ??
      pullRequestOfRef(read(env, 'CI_MERGE_REQUEST_REF_PATH')),
    prTitle: read(env, 'CI_MERGE_REQUEST_TITLE'),
    jobName: read(env, 'CI_JOB_NAME'),
    jobUrl: read(env, 'CI_JOB_URL'),
  };
}

function buildkite(env: Env): CiContext {
  const repoUrl = read(env, 'BUILDKITE_REPO');
  const commit = read(env, 'BUILDKITE_COMMIT');
  const buildUrl = read(env, 'BUILDKITE_BUILD_URL');
  const jobId = read(env, 'BUILDKITE_JOB_ID');
  return {
    provider: 'buildkite',
    repo: repoUrl === undefined ? undefined : parseGitRemote(repoUrl),
    // A build started without a commit says "HEAD"; git knows which commit that is.
    commitSha: commit === 'HEAD' ? undefined : commit,
    branch: firstBranch(read(env, 'BUILDKITE_BRANCH')),
    prNumber: positiveInt(read(env, 'BUILDKITE_PULL_REQUEST')),
    jobName: read(env, 'BUILDKITE_LABEL'),
    jobUrl: buildUrl !== undefined && jobId !== undefined ? `${buildUrl}#${jobId}` : buildUrl,
    runAttempt: wholeNumber(read(env, 'BUILDKITE_RETRY_COUNT')),
  };
}

function circleci(env: Env): CiContext {
  const repoUrl = read(env, 'CIRCLE_REPOSITORY_URL');
  const owner = read(env, 'CIRCLE_PROJECT_USERNAME');
  const name = read(env, 'CIRCLE_PROJECT_REPONAME');
  const fromParts =
    owner !== undefined && name !== undefined ? { host: 'github.com', owner, name } : undefined;
  return {
    provider: 'circleci',
    repo: (repoUrl === undefined ? undefined : parseGitRemote(repoUrl)) ?? fromParts,
    commitSha: read(env, 'CIRCLE_SHA1'),
    // A pull request from a fork builds CIRCLE_BRANCH "pull/123": its number, not a branch.
    branch: firstBranch(read(env, 'CIRCLE_BRANCH')),
    prNumber:
      prNumberFromUrl(read(env, 'CIRCLE_PULL_REQUEST')) ??
      positiveInt(read(env, 'CIRCLE_PR_NUMBER')) ??
      pullRequestOfRef(read(env, 'CIRCLE_BRANCH')),
    jobName: read(env, 'CIRCLE_JOB'),
    jobUrl: read(env, 'CIRCLE_BUILD_URL'),
  };
}

function jenkins(env: Env): CiContext {
  const gitUrl = read(env, 'GIT_URL');
  const branch = read(env, 'CHANGE_BRANCH') ?? read(env, 'BRANCH_NAME') ?? read(env, 'GIT_BRANCH');
  return {
    provider: 'jenkins',
    repo: gitUrl === undefined ? undefined : parseGitRemote(gitUrl),
    commitSha: read(env, 'GIT_COMMIT'),
    branch: branchName(branch?.replace(/^(?:refs\/remotes\/)?origin\//, '')),
    prNumber: positiveInt(read(env, 'CHANGE_ID')),
    prTitle: read(env, 'CHANGE_TITLE'),
    jobName: read(env, 'JOB_NAME'),
    jobUrl: read(env, 'BUILD_URL'),
  };
}

/**
 * Azure Pipelines. A pull request builds BUILD_SOURCEBRANCH refs/pull/<n>/merge; its head branch is
 * SYSTEM_PULLREQUEST_SOURCEBRANCH (which the analytics CLI does not send: then git's branch, if any).
 */
function azure(env: Env): CiContext {
  const repoUrl = read(env, 'BUILD_REPOSITORY_URI');
  // Azure Repos: https://dev.azure.com/{org}/{project}/_git/{repo}; "_git" is no part of the owner.
  const repo = repoUrl === undefined ? undefined : parseGitRemote(repoUrl.replace(/\/_git\//, '/'));
  const collection = read(env, 'SYSTEM_TEAMFOUNDATIONCOLLECTIONURI');
  const project = read(env, 'SYSTEM_TEAMPROJECT');
  const buildId = read(env, 'BUILD_BUILDID');
  const sourceBranch = read(env, 'BUILD_SOURCEBRANCH');
  return {
    provider: 'azure',
    repo,
    commitSha: read(env, 'BUILD_SOURCEVERSION'),
    branch: firstBranch(read(env, 'SYSTEM_PULLREQUEST_SOURCEBRANCH'), sourceBranch),
    prNumber:
      positiveInt(read(env, 'SYSTEM_PULLREQUEST_PULLREQUESTNUMBER')) ??
      positiveInt(read(env, 'SYSTEM_PULLREQUEST_PULLREQUESTID')) ??
      pullRequestOfRef(sourceBranch),
    jobName: read(env, 'SYSTEM_JOBDISPLAYNAME') ?? read(env, 'BUILD_DEFINITIONNAME'),
    jobUrl:
      collection !== undefined && project !== undefined && buildId !== undefined
        ? `${collection.replace(/\/+$/, '')}/${encodeURIComponent(project)}/_build/results?buildId=${encodeURIComponent(buildId)}`
        : undefined,
  };
}

function bitbucket(env: Env): CiContext {
  const origin = read(env, 'BITBUCKET_GIT_HTTP_ORIGIN') ?? read(env, 'BITBUCKET_GIT_SSH_ORIGIN');
  const fullName = read(env, 'BITBUCKET_REPO_FULL_NAME');
  const repo =
    (origin === undefined ? undefined : parseGitRemote(origin)) ??
    (fullName === undefined ? undefined : repoFromPath('bitbucket.org', fullName));
  const buildNumber = read(env, 'BITBUCKET_BUILD_NUMBER');
  return {
    provider: 'bitbucket',
    repo,
    commitSha: read(env, 'BITBUCKET_COMMIT'),
    branch: firstBranch(read(env, 'BITBUCKET_BRANCH')),
    prNumber: positiveInt(read(env, 'BITBUCKET_PR_ID')),
    jobUrl:
      repo !== undefined && buildNumber !== undefined
        ? `https://${repo.host}/${repo.owner}/${repo.name}/pipelines/results/${encodeURIComponent(buildNumber)}`
        : undefined,
  };
}

function fromProvider(env: Env, options: DetectOptions): CiContext {
  if (read(env, 'GITHUB_ACTIONS') === 'true') return github(env, options);
  if (read(env, 'GITLAB_CI') === 'true') return gitlab(env);
  if (read(env, 'BUILDKITE') === 'true') return buildkite(env);
  if (read(env, 'CIRCLECI') === 'true') return circleci(env);
  if (read(env, 'JENKINS_URL') !== undefined) return jenkins(env);
  if (read(env, 'TF_BUILD')?.toLowerCase() === 'true') return azure(env);
  if (read(env, 'BITBUCKET_BUILD_NUMBER') !== undefined) return bitbucket(env);
  return { provider: 'local' };
}

/** The analytics CLI's --pr-number reaches the server as TRUNK_PR_NUMBER in meta.json's envs, and wins there. */
function withPrOverride(context: CiContext, env: Env): CiContext {
  const pr = positiveInt(read(env, 'TRUNK_PR_NUMBER'));
  return pr === undefined ? context : { ...context, prNumber: pr };
}

/** Fills what the CI did not say from the checkout: origin's URL, HEAD's commit, the branch. */
function withGitFallback(context: CiContext, git: GitRunner | undefined): CiContext {
  if (git === undefined) return context;
  const filled = { ...context };
  if (filled.repo === undefined) {
    const remote = git(['remote', 'get-url', 'origin']);
    filled.repo = remote === undefined ? undefined : parseGitRemote(remote);
  }
  filled.commitSha ??= git(['rev-parse', 'HEAD']);
  if (filled.branch === undefined) {
    const branch = git(['rev-parse', '--abbrev-ref', 'HEAD']);
    filled.branch = branch === 'HEAD' ? undefined : branchName(branch);
  }
  return filled;
}

function withoutUndefined(context: CiContext): CiContext {
  return Object.fromEntries(Object.entries(context).filter(([, v]) => v !== undefined)) as CiContext;
}

/** The CI context from environment variables, completed from git where the CI says nothing. */
export function detectCi(env: Env, options: DetectOptions = {}): CiContext {
  return withoutUndefined(withGitFallback(withPrOverride(fromProvider(env, options), env), options.git));
}
