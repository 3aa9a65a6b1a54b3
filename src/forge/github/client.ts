import { setTimeout as sleep } from 'node:timers/promises';
import { createAppAuth } from '@octokit/auth-app';
import { retry } from '@octokit/plugin-retry';
import { type ThrottlingOptions, throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';

/** Octokit with plugin-retry (5xx, network errors) and plugin-throttling (primary and secondary rate limits). */
const RetryingOctokit = Octokit.plugin(retry, throttling);
export type GitHubApi = InstanceType<typeof RetryingOctokit>;

export interface GitHubLog {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
}

export type GitHubAuth =
  /** A personal access token (or any token) sent as is. */
  | { kind: 'token'; token: string }
  /** A GitHub App: a JWT finds the repository's installation, whose tokens (cached by auth-app) make the calls. */
  | { kind: 'app'; appId: number | string; privateKey: string };

export interface GitHubClientOptions {
  /** Default https://api.github.com; GitHub Enterprise Server: https://HOST/api/v3. */
  baseUrl?: string;
  auth: GitHubAuth;
  log?: GitHubLog;
  /** How many times a rate-limited or failed (5xx, network) request is repeated (default 3). */
  retries?: number;
  /**
   * Milliseconds per second of wait: the waits GitHub indicates (retry-after, x-ratelimit-reset) and the
   * 5xx back-off (1 s, 4 s, 9 s…) are multiplied by it. Default 1000; tests pass 1.
   */
  retryAfterBaseMs?: number;
  /** A rate limit asking for a longer wait than this (seconds) is not waited for: the call fails (default 60). */
  maxRetryAfterSeconds?: number;
  /**
   * Minimum spacing of write requests. Default: plugin-throttling's (1 s between writes, 3 s between
   * writes that notify users, as GitHub recommends). 0 turns spacing off (simulators, tests).
   */
  writeIntervalMs?: number;
  userAgent?: string;
}

const NO_LOG: GitHubLog = { info() {}, warn() {}, error() {} };
/** Refusals the caller interprets (405 not mergeable, 409 conflict / head moved, …): never repeated blindly. */
const DO_NOT_RETRY = [400, 401, 403, 404, 405, 409, 410, 422, 429, 451];

type Group = NonNullable<ThrottlingOptions['write']>;

/**
 * Where the forge gets an authenticated Octokit for a repository: one client for a token, or for an
 * App one installation client per installation (found once per repository, then cached).
 */
export class GitHubClient {
  readonly retries: number;
  readonly retryAfterBaseMs: number;
  readonly log: GitHubLog;
  readonly #options: GitHubClientOptions;
  readonly #tokenApi: GitHubApi | null;
  readonly #appApi: GitHubApi | null;
  readonly #installations = new Map<string, Promise<number>>();
  readonly #installationApis = new Map<number, GitHubApi>();

  constructor(options: GitHubClientOptions) {
    this.#options = options;
    this.retries = options.retries ?? 3;
    this.retryAfterBaseMs = options.retryAfterBaseMs ?? 1000;
    this.log = options.log ?? NO_LOG;
    const { auth } = options;
    this.#tokenApi = auth.kind === 'token' ? this.#build('mainline-token', auth.token) : null;
    this.#appApi =
      auth.kind === 'app'
        ? this.#build('mainline-app', undefined, { appId: auth.appId, privateKey: auth.privateKey })
        : null;
  }

  /** An Octokit authorized for owner/name. */
  async forRepo(repo: { owner: string; name: string }): Promise<GitHubApi> {
    if (this.#tokenApi !== null) return this.#tokenApi;
    const auth = this.#options.auth;
    if (auth.kind !== 'app' || this.#appApi === null) throw new Error('unreachable: no GitHub auth');
    const installationId = await this.#installation(this.#appApi, repo);
    let api = this.#installationApis.get(installationId);
    if (api === undefined) {
      api = this.#build(`mainline-installation-${installationId}`, undefined, {
        appId: auth.appId,
        privateKey: auth.privateKey,
        installationId,
      });
      this.#installationApis.set(installationId, api);
    }
    return api;
  }

  /**
   * The account (user or organization login) a GitHub App installation is on, or null when the App has
   * no such installation: what `mainline github connect` binds to an organization.
   */
  async installationAccount(installationId: number): Promise<string | null> {
    if (this.#appApi === null)
      throw new Error('installations exist only for a GitHub App (MAINLINE_GITHUB_APP_ID)');
    try {
      const res = await this.#appApi.request('GET /app/installations/{installation_id}', {
        installation_id: installationId,
      });
      const account = res.data.account as { login?: string } | null;
      return account?.login ?? null;
    } catch (err) {
      if ((err as { status?: number }).status === 404) return null;
      throw err;
    }
  }

  /** Forget the repository's installation (after the app was reinstalled, say); the next call looks it up again. */
  forget(repo: { owner: string; name: string }): void {
    this.#installations.delete(repoKey(repo));
  }

  /** Wait before attempt `attempt + 1` of a call repeated by hand (the same curve as plugin-retry's). */
  backoff(attempt: number): Promise<void> {
    return sleep((attempt + 1) ** 2 * this.retryAfterBaseMs);
  }

  #installation(app: GitHubApi, repo: { owner: string; name: string }): Promise<number> {
    const key = repoKey(repo);
    let found = this.#installations.get(key);
    if (found === undefined) {
      found = app
        .request('GET /repos/{owner}/{repo}/installation', { owner: repo.owner, repo: repo.name })
        .then((res) => res.data.id);
      found.catch(() => this.#installations.delete(key));
      this.#installations.set(key, found);
    }
    return found;
  }

  #build(id: string, token: string | undefined, appAuth?: Record<string, unknown>): GitHubApi {
    const o = this.#options;
    const log = this.log;
    const maxWait = o.maxRetryAfterSeconds ?? 60;
    const onLimit =
      (kind: string) =>
      (
        retryAfter: number,
        options: { method: string; url: string },
        _octokit: unknown,
        retryCount: number,
      ) => {
        const retrying = retryCount < this.retries && retryAfter <= maxWait;
        log.warn(
          { method: options.method, url: options.url, retryAfter, retryCount, retrying },
          `GitHub ${kind} rate limit hit${retrying ? `; retrying in ${retryAfter} s` : '; giving up'}`,
        );
        return retrying;
      };
    const spacing = o.writeIntervalMs === undefined ? {} : spacingGroups(o.writeIntervalMs);
    return new RetryingOctokit({
      baseUrl: o.baseUrl ?? 'https://api.github.com',
      userAgent: o.userAgent ?? 'mainline',
      ...(appAuth === undefined ? { auth: token } : { authStrategy: createAppAuth, auth: appAuth }),
      log: {
        debug: () => {},
        info: () => {},
        warn: (m: string) => log.warn({}, `octokit: ${m}`),
        // plugin-request-log reports every failed request here, expected 404s and 422s included: the
        // forge decides what a failure means, so these are only information.
        error: (m: string) => log.info({}, `octokit: ${m}`),
      },
      retry: { retries: this.retries, doNotRetry: DO_NOT_RETRY, retryAfterBaseValue: this.retryAfterBaseMs },
      throttle: {
        id,
        retryAfterBaseValue: this.retryAfterBaseMs,
        onRateLimit: onLimit('primary'),
        onSecondaryRateLimit: onLimit('secondary'),
        ...spacing,
      },
    });
  }
}

function repoKey(repo: { owner: string; name: string }): string {
  return `${repo.owner}/${repo.name}`.toLowerCase();
}

/**
 * Stand-ins for plugin-throttling's write and notification limiters (Bottleneck groups, of which it only
 * calls `key(id).schedule(options, fn, ...args)`): one serial gate spacing writes by intervalMs.
 */
function spacingGroups(intervalMs: number): { write: Group; notifications: Group } {
  let last = 0;
  let gate: Promise<void> = Promise.resolve();
  const limiter = {
    schedule<T>(_job: unknown, fn: (...args: unknown[]) => Promise<T>, ...args: unknown[]): Promise<T> {
      if (intervalMs <= 0) return fn(...args);
      const turn = gate.then(async () => {
        const wait = last + intervalMs - Date.now();
        if (wait > 0) await sleep(wait);
        last = Date.now();
      });
      gate = turn;
      return turn.then(() => fn(...args));
    },
  };
  const group = { key: () => limiter } as unknown as Group;
  return { write: group, notifications: group };
}
