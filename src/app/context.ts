import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Tables } from '../store/schema.ts';
import type { Caches } from './caches.ts';
import type { RepositoryCache } from './repositories.ts';
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
  /**
   * The app's in-memory caches (caches.ts), sized from the config: one set per process (the HTTP app's
   * and its runners' contexts share it), a fresh one per test app.
   */
  readonly caches: Caches;
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
