import {
  type BuildOutcome,
  type Forge,
  type ForgePullRequest,
  type ForgeRepo,
  type MergeOutcome,
  type PrStateReport,
  pullRequestsOf,
} from '../app/ports.ts';
import type { Config } from '../config.ts';
import type { MergeMethod } from '../domain/queue/index.ts';
import { GitRepositoryForge } from './git-repository-forge.ts';
import { GitHubForge } from './github/index.ts';

/**
 * Sends each repository to its forge: repositories on the configured GitHub host to GitHub, every
 * other one to the plain-git forge (bare repositories under MAINLINE_GIT_ROOT).
 */
export class RoutingForge implements Forge {
  readonly git: GitRepositoryForge;
  readonly github: GitHubForge;
  readonly #githubHost: string;

  constructor(git: GitRepositoryForge, github: GitHubForge, githubHost: string) {
    this.git = git;
    this.github = github;
    this.#githubHost = githubHost.toLowerCase();
  }

  forgeOf(repo: ForgeRepo): Forge {
    return repo.host.toLowerCase() === this.#githubHost ? this.github : this.git;
  }

  pollIntervalMs(repo: ForgeRepo): number | undefined {
    return this.forgeOf(repo).pollIntervalMs?.(repo);
  }
  head(repo: ForgeRepo, branch: string): Promise<string | null> {
    return this.forgeOf(repo).head(repo, branch);
  }
  pullRequest(repo: ForgeRepo, number: number): Promise<ForgePullRequest | null> {
    return this.forgeOf(repo).pullRequest(repo, number);
  }
  pullRequests(repo: ForgeRepo, numbers: readonly number[]): Promise<Map<number, ForgePullRequest | null>> {
    return pullRequestsOf(this.forgeOf(repo), repo, numbers);
  }
  buildTestBranch(
    repo: ForgeRepo,
    input: { testBranch: string; baseSha: string; prHeads: readonly { number: number; sha: string }[] },
  ): Promise<BuildOutcome> {
    return this.forgeOf(repo).buildTestBranch(repo, input);
  }
  mergePullRequest(
    repo: ForgeRepo,
    input: { targetBranch: string; prNumber: number; prTitle: string; headSha: string; method: MergeMethod },
  ): Promise<MergeOutcome> {
    return this.forgeOf(repo).mergePullRequest(repo, input);
  }
  deleteBranch(repo: ForgeRepo, branch: string): Promise<void> {
    return this.forgeOf(repo).deleteBranch(repo, branch);
  }
  requiredStatuses(repo: ForgeRepo, branch: string) {
    return this.forgeOf(repo).requiredStatuses(repo, branch);
  }
  reportPrState(repo: ForgeRepo, input: PrStateReport): Promise<void> {
    return this.forgeOf(repo).reportPrState(repo, input);
  }
  async createDraftPullRequest(
    repo: ForgeRepo,
    input: { testBranch: string; base: string; title: string; body: string },
  ): Promise<number | null> {
    return (await this.forgeOf(repo).createDraftPullRequest?.(repo, input)) ?? null;
  }
  async closePullRequest(repo: ForgeRepo, number: number): Promise<void> {
    await this.forgeOf(repo).closePullRequest?.(repo, number);
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
  options: { db: ConstructorParameters<typeof GitRepositoryForge>[0]['db']; now?: () => number; log?: Log },
): Forge {
  const git = new GitRepositoryForge({ root: config.gitRoot, db: options.db, now: options.now ?? Date.now });
  const gh = config.github;
  if (gh === undefined) return git;
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
  return new RoutingForge(git, github, gh.host);
}

/** The plain-git forge inside whatever forge the server runs (for the /v1/git API). */
export function gitForgeOf(forge: Forge): GitRepositoryForge | undefined {
  if (forge instanceof GitRepositoryForge) return forge;
  return forge instanceof RoutingForge ? forge.git : undefined;
}
