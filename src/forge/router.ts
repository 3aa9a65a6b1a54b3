import { join } from 'node:path';
import {
  type BuildOutcome,
  type Forge,
  type ForgePullRequest,
  type ForgeRepo,
  forgeKindOf,
  type MergeInput,
  type MergeOutcome,
  type PrStateReport,
  pullRequestsOf,
} from '../app/ports.ts';
import type { Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import type { WorkflowRun } from '../domain/fork-run.ts';
import { repoIsGranted } from '../store/forge/grants.ts';
import { GitRepositoryForge } from './git-repository-forge.ts';
import { GitHubForge } from './github/index.ts';
import { GitLabForge } from './gitlab/forge.ts';

/**
 * Sends each repository to its forge: repositories on the configured GitHub host to GitHub, every
 * other one to the plain-git forge (bare repositories under MAINLINE_GIT_ROOT).
 */
export class RoutingForge implements Forge {
  readonly git: GitRepositoryForge;
  readonly github: GitHubForge;
  readonly #githubHost: string;
  readonly #granted: (repo: ForgeRepo) => Promise<boolean>;
  /** The GitLab forge and its host, when MAINLINE_GITLAB_* is set. */
  readonly gitlab: { readonly forge: GitLabForge; readonly host: string } | undefined;

  /**
   * `granted`: whether the stored repository's organization holds its owner's grant. Checked before
   * every GitHub call, so a queue made before grants existed (or whose grant was revoked) stops
   * acting on GitHub instead of going on with the server's credential.
   */
  constructor(
    git: GitRepositoryForge,
    github: GitHubForge,
    githubHost: string,
    granted: (repo: ForgeRepo) => Promise<boolean>,
    gitlab?: { forge: GitLabForge; host: string },
  ) {
    this.gitlab = gitlab === undefined ? undefined : { forge: gitlab.forge, host: gitlab.host.toLowerCase() };
    this.git = git;
    this.github = github;
    this.#githubHost = githubHost.toLowerCase();
    this.#granted = granted;
  }

  #kindOf(repo: ForgeRepo) {
    return forgeKindOf(repo.host, { github: this.#githubHost, gitlab: this.gitlab?.host });
  }

  /** The repository's forge; on the GitHub host only for a repository whose organization was granted its owner. */
  async forgeOf(repo: ForgeRepo): Promise<Forge> {
    const kind = this.#kindOf(repo);
    if (kind === 'gitlab' && this.gitlab !== undefined) {
      if (!(await this.#granted(repo))) {
        throw new AppError(
          'FORBIDDEN',
          `The organization of ${repo.owner}/${repo.name} has not been granted the GitLab namespace "${repo.owner}" on ${repo.host}; nothing is done on GitLab until the operator grants it (mainline gitlab grant, docs/gitlab.md)`,
        );
      }
      return this.gitlab.forge;
    }
    if (kind !== 'github') return this.git;
    if (!(await this.#granted(repo))) {
      throw new AppError(
        'FORBIDDEN',
        `The organization of ${repo.owner}/${repo.name} has not been granted the GitHub account "${repo.owner}" on ${repo.host}; nothing is done on GitHub until the operator grants it (mainline github grant / connect, docs/github.md)`,
      );
    }
    return this.github;
  }

  pollIntervalMs(repo: ForgeRepo): number | undefined {
    const kind = this.#kindOf(repo);
    if (kind === 'gitlab' && this.gitlab !== undefined) return this.gitlab.forge.pollIntervalMs();
    return kind === 'github' ? this.github.pollIntervalMs() : undefined;
  }
  async head(repo: ForgeRepo, branch: string): Promise<string | null> {
    return (await this.forgeOf(repo)).head(repo, branch);
  }
  async pullRequest(repo: ForgeRepo, number: number): Promise<ForgePullRequest | null> {
    return (await this.forgeOf(repo)).pullRequest(repo, number);
  }
  async pullRequests(
    repo: ForgeRepo,
    numbers: readonly number[],
  ): Promise<Map<number, ForgePullRequest | null>> {
    return pullRequestsOf(await this.forgeOf(repo), repo, numbers);
  }
  async buildTestBranch(
    repo: ForgeRepo,
    input: { testBranch: string; baseSha: string; prHeads: readonly { number: number; sha: string }[] },
  ): Promise<BuildOutcome> {
    return (await this.forgeOf(repo)).buildTestBranch(repo, input);
  }
  async mergePullRequest(repo: ForgeRepo, input: MergeInput): Promise<MergeOutcome> {
    return (await this.forgeOf(repo)).mergePullRequest(repo, input);
  }
  async deleteBranch(repo: ForgeRepo, branch: string): Promise<void> {
    return (await this.forgeOf(repo)).deleteBranch(repo, branch);
  }
  async requiredStatuses(repo: ForgeRepo, branch: string) {
    return (await this.forgeOf(repo)).requiredStatuses(repo, branch);
  }
  async reportPrState(repo: ForgeRepo, input: PrStateReport): Promise<void> {
    return (await this.forgeOf(repo)).reportPrState(repo, input);
  }
  async createDraftPullRequest(
    repo: ForgeRepo,
    input: { testBranch: string; base: string; title: string; body: string },
  ): Promise<number | null> {
    return (await (await this.forgeOf(repo)).createDraftPullRequest?.(repo, input)) ?? null;
  }
  async closePullRequest(repo: ForgeRepo, number: number): Promise<void> {
    await (await this.forgeOf(repo)).closePullRequest?.(repo, number);
  }
  async removeLabel(repo: ForgeRepo, number: number, label: string): Promise<void> {
    await (await this.forgeOf(repo)).removeLabel?.(repo, number, label);
  }
  async collaboratorPermission(repo: ForgeRepo, login: string): Promise<string> {
    return (await (await this.forgeOf(repo)).collaboratorPermission?.(repo, login)) ?? 'none';
  }
  async workflowRun(repo: ForgeRepo, runId: number): Promise<WorkflowRun | null> {
    return (await (await this.forgeOf(repo)).workflowRun?.(repo, runId)) ?? null;
  }
}

type Log = {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
};

/** The forge a server runs with: plain git, plus GitHub for its host when MAINLINE_GITHUB_* is set. */
export function createForge(
  config: Config,
  options: Omit<ConstructorParameters<typeof GitRepositoryForge>[0], 'root'> & { log?: Log },
): Forge {
  const git = new GitRepositoryForge({
    root: config.gitRoot,
    db: options.db,
    now: options.now ?? Date.now,
    ...(options.caches === undefined ? {} : { caches: options.caches }),
  });
  const gh = config.github;
  const gitlab = gitlabOf(config, options.log);
  if (gh === undefined && gitlab === undefined) return git;
  const granted = (repo: ForgeRepo) => repoIsGranted(options.db, repo.id);
  if (gh === undefined) {
    // No GitHub: a client that is never called (no repository host is empty).
    const unused = new GitHubForge({ client: { auth: { kind: 'token', token: '' } } });
    return new RoutingForge(git, unused, '', granted, gitlab);
  }
  const github = new GitHubForge({
    // Webhooks bring changes; polling (2 API calls per queued PR) is only a safety net, kept rare so a
    // busy queue stays far below GitHub's rate limits. Without a webhook secret, poll more often.
    pollIntervalMs: gh.webhookSecret === undefined ? 30_000 : 120_000,
    client: {
      baseUrl: gh.apiUrl,
      auth: gh.auth,
      ...(options.log !== undefined ? { log: options.log } : {}),
    },
  });
  return new RoutingForge(git, github, gh.host, granted, gitlab);
}

/** The GitLab forge for MAINLINE_GITLAB_*, with its clones beside the plain-git forge's repositories. */
function gitlabOf(config: Config, log: Log | undefined): { forge: GitLabForge; host: string } | undefined {
  const gl = config.gitlab;
  if (gl === undefined) return undefined;
  const forge = new GitLabForge({
    client: { baseUrl: gl.url, token: gl.token, ...(log !== undefined ? { log } : {}) },
    // A folder name no repository id can take (ids never start with a dot).
    mirrorRoot: join(config.gitRoot, '.gitlab'),
    pollIntervalMs: gl.webhookSecret === undefined ? 30_000 : 120_000,
    createPipelines: gl.createPipelines,
  });
  return { forge, host: gl.host };
}

/** The GitLab forge inside whatever forge the server runs (for the GitLab webhook). */
export function gitlabForgeOf(forge: Forge): GitLabForge | undefined {
  if (forge instanceof GitLabForge) return forge;
  return forge instanceof RoutingForge ? forge.gitlab?.forge : undefined;
}

/** The plain-git forge inside whatever forge the server runs (for the /v1/git API). */
export function gitForgeOf(forge: Forge): GitRepositoryForge | undefined {
  if (forge instanceof GitRepositoryForge) return forge;
  return forge instanceof RoutingForge ? forge.git : undefined;
}
