import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Tables } from '../store/schema.ts';
import type { ReadAnswers } from './health/read-answers.ts';
import type { ForgeSettingsMemo } from './queue/forge-settings-cache.ts';
import type { QueueStateCache } from './queue/state-cache.ts';
import type { RepositoryCache } from './repositories.ts';
import type { AuthThrottle } from './throttle.ts';
import type { TokenCache } from './tokens.ts';

/** What every use case is given: the database, the configuration, and the time source. */
export interface AppContext {
  readonly db: Kysely<Tables>;
  readonly config: Config;
  /** Epoch milliseconds now. Tests pass a controllable clock. */
  readonly now: () => number;
  /**
   * The per-address limit on failed authentications and sign-ins; the HTTP app makes one from the
   * config (runners, which authenticate nobody, have none).
   */
  readonly authThrottle?: AuthThrottle;
  /** Parsed queue states by (queue, version) for queue reads; the HTTP app makes one sized from the config. */
  readonly queueStates?: QueueStateCache;
  /** What GitHub branches say about their queues, for getQueue only; the HTTP app makes one sized from the config. */
  readonly forgeSettings?: ForgeSettingsMemo;
  /** Callers of recently authenticated tokens (MAINLINE_TOKEN_CACHE[_SECONDS]); the HTTP app makes one. */
  readonly tokens?: TokenCache;
  /** Repository identities by organization and name (MAINLINE_REPOSITORY_CACHE); the HTTP app makes one. */
  readonly repositories?: RepositoryCache;
  /** Kept JSON of test-health read answers (health/read-answers.ts); each route makes its own when absent. */
  readonly readAnswers?: {
    readonly testDetails: ReadAnswers;
    readonly failingPages: ReadAnswers;
    readonly unhealthyPages: ReadAnswers;
  };
}

/** Who is calling: resolved from the x-api-token header. Every query is scoped to orgId. */
export interface Caller {
  readonly tokenId: string;
  /** The token's label, recorded as who made a change. */
  readonly tokenName: string;
  readonly orgId: string;
  readonly orgSlug: string;
  /** The app's repository lookup cache, on callers made by the HTTP auth hook (findRepository uses it). */
  readonly repositories?: RepositoryCache;
}
