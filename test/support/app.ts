import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { type Caches, createCaches } from '../../src/app/caches.ts';
import type { Forge } from '../../src/app/ports.ts';
import { createToken } from '../../src/app/tokens.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/http/app.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly db: TestDatabase;
  readonly config: Config;
  /** The app's caches: contexts a test builds around the app (runners) share them, as main.ts does. */
  readonly caches: Caches;
  /** Creates the organization (if needed) and a new token for it. */
  token(orgSlug: string): Promise<string>;
  /** POSTs a JSON body as an API client would. */
  post(
    url: string,
    body: unknown,
    token?: string,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * The real HTTP application on a fresh real database. `env` overrides configuration exactly as
 * environment variables would; logs are off and rate limiting (per token, and of failed
 * authentications per address) is off unless a test turns it on.
 */
export async function buildTestApp(
  env: Record<string, string> = {},
  options: { now?: () => number; forge?: (config: Config, db: TestDatabase) => Forge } = {},
): Promise<TestApp> {
  const db = await createTestDatabase();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    MAINLINE_RATE_LIMIT: '0',
    MAINLINE_AUTH_FAIL_LIMIT: '0',
    ...db.env,
    ...env,
  });
  const caches = createCaches(config);
  const app = await buildApp({
    config,
    caches,
    database: db.database,
    ...(options.now ? { now: options.now } : {}),
    ...(options.forge ? { forge: options.forge(config, db) } : {}),
  });
  return {
    app,
    db,
    config,
    caches,
    token: async (orgSlug) =>
      (await createToken(db.database.db, { orgSlug, name: 'test', now: Date.now() })).token,
    post: (url, body, token, headers = {}) =>
      app.inject({
        method: 'POST',
        url,
        headers: {
          'content-type': 'application/json',
          ...(token ? { 'x-api-token': token } : {}),
          ...headers,
        },
        payload: JSON.stringify(body),
      }),
    close: async () => {
      await app.close();
      await db.cleanup();
    },
  };
}

export const REPO = { host: 'github.com', owner: 'acme', name: 'web' } as const;
