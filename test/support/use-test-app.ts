import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Forge } from '../../src/app/ports.ts';
import type { Config } from '../../src/config.ts';
import { buildTestApp, REPO, type TestApp } from './app.ts';
import type { TestDatabase } from './database.ts';

export interface UseTestAppOptions {
  /** Configuration overrides, exactly as environment variables would give them. */
  readonly env?: Record<string, string>;
  readonly now?: () => number;
  readonly forge?: (config: Config, db: TestDatabase) => Forge;
  /** The organization whose token `orgToken` is; `acme` unless told. */
  readonly org?: string;
  /** Creates REPO through the API before the first test. */
  readonly repository?: boolean;
  /** A fresh app (and database) for every test instead of one for the whole file or describe block. */
  readonly perTest?: boolean;
}

/** The app of `useTestApp`, usable only inside tests and hooks (it exists from the set-up hook on). */
export interface UsedTestApp extends TestApp {
  /** The organization's slug. */
  readonly org: string;
  /** An API token of that organization. */
  readonly orgToken: string;
}

/**
 * Registers the set-up every HTTP test repeats: the real app on a fresh real database, an organization
 * and its token (and REPO if asked), built before the tests of the enclosing file or describe block
 * and closed after them. Tests that need something else (an app per test with its own settings, a
 * listening server shared with other fixtures) call buildTestApp themselves.
 */
export function useTestApp(options: UseTestAppOptions = {}): UsedTestApp {
  const org = options.org ?? 'acme';
  let current: { app: TestApp; token: string } | undefined;
  const live = () => {
    if (current === undefined) throw new Error('useTestApp: the app exists only inside tests and hooks');
    return current;
  };
  const setUp = async () => {
    const app = await buildTestApp(options.env, {
      ...(options.now ? { now: options.now } : {}),
      ...(options.forge ? { forge: options.forge } : {}),
    });
    const token = await app.token(org);
    current = { app, token };
    if (options.repository) {
      const res = await app.post('/v1/repositories/create', { repo: REPO }, token);
      if (res.statusCode !== 200) throw new Error(`useTestApp: creating the repository: ${res.body}`);
    }
  };
  const tearDown = async () => {
    const was = current;
    current = undefined;
    await was?.app.close();
  };
  if (options.perTest) {
    beforeEach(setUp);
    afterEach(tearDown);
  } else {
    beforeAll(setUp);
    afterAll(tearDown);
  }
  return {
    org,
    get orgToken() {
      return live().token;
    },
    get app() {
      return live().app.app;
    },
    get db() {
      return live().app.db;
    },
    get config() {
      return live().app.config;
    },
    get caches() {
      return live().app.caches;
    },
    token: (orgSlug) => live().app.token(orgSlug),
    post: (...args) => live().app.post(...args),
    close: tearDown,
  };
}
