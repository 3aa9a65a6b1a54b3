import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Tables } from '../store/schema.ts';
import type { ForgeSettingsMemo } from './queue/forge-settings-cache.ts';
import type { QueueStateCache } from './queue/state-cache.ts';
import type { AuthThrottle } from './throttle.ts';

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
}

/** Who is calling: resolved from the x-api-token header. Every query is scoped to orgId. */
export interface Caller {
  readonly tokenId: string;
  /** The token's label, recorded as who made a change. */
  readonly tokenName: string;
  readonly orgId: string;
  readonly orgSlug: string;
}
