/**
 * Which CI is running and what it is building, read from environment variables. Pure: the
 * environment, a git runner and a file reader are passed in, so tests can describe any CI.
 */

export type Env = Readonly<Record<string, string | undefined>>;

export type CiProvider = 'github' | 'gitlab' | 'buildkite' | 'circleci' | 'jenkins' | 'local';

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
  const fromRef = read(env, 'GITHUB_REF')?.match(/^refs\/pull\/(\d+)\/(?:merge|head)$/)?.[1];
  return {
    provider: 'github',
    repo: repository === undefined ? undefined : repoFromPath(host, repository),
    // On pull_request events GITHUB_SHA is a temporary merge commit; the head commit is the PR's.
    commitSha: typeof pr?.head?.sha === 'string' ? pr.head.sha : read(env, 'GITHUB_SHA'),
    branch: read(env, 'GITHUB_HEAD_REF') ?? read(env, 'GITHUB_REF_NAME'),
    prNumber: positiveInt(fromRef) ?? (typeof pr?.number === 'number' ? pr.number : undefined),
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
    branch:
      read(env, 'CI_MERGE_REQUEST_SOURCE_BRANCH_NAME') ??
      read(env, 'CI_COMMIT_BRANCH') ??
      read(env, 'CI_COMMIT_REF_NAME'),
    prNumber: positiveInt(read(env, 'CI_MERGE_REQUEST_IID')),
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
    branch: read(env, 'BUILDKITE_BRANCH'),
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
    branch: read(env, 'CIRCLE_BRANCH'),
    prNumber: prNumberFromUrl(read(env, 'CIRCLE_PULL_REQUEST')) ?? positiveInt(read(env, 'CIRCLE_PR_NUMBER')),
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
    branch: branch?.replace(/^(?:refs\/remotes\/)?origin\//, '').replace(/^refs\/heads\//, ''),
    prNumber: positiveInt(read(env, 'CHANGE_ID')),
    prTitle: read(env, 'CHANGE_TITLE'),
    jobName: read(env, 'JOB_NAME'),
    jobUrl: read(env, 'BUILD_URL'),
  };
}

function fromProvider(env: Env, options: DetectOptions): CiContext {
  if (read(env, 'GITHUB_ACTIONS') === 'true') return github(env, options);
  if (read(env, 'GITLAB_CI') === 'true') return gitlab(env);
  if (read(env, 'BUILDKITE') === 'true') return buildkite(env);
  if (read(env, 'CIRCLECI') === 'true') return circleci(env);
  if (read(env, 'JENKINS_URL') !== undefined) return jenkins(env);
  return { provider: 'local' };
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
    filled.branch = branch === 'HEAD' ? undefined : branch;
  }
  return filled;
}

function withoutUndefined(context: CiContext): CiContext {
  return Object.fromEntries(Object.entries(context).filter(([, v]) => v !== undefined)) as CiContext;
}

/** The CI context from environment variables, completed from git where the CI says nothing. */
export function detectCi(env: Env, options: DetectOptions = {}): CiContext {
  return withoutUndefined(withGitFallback(fromProvider(env, options), options.git));
}
