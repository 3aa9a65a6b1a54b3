// The set-up of the tests that run a client (the CLI, the GitHub Action, the GitLab CI template) against
// a real `mainline serve` process: a fresh database, a bootstrap organization and token, no rate limit,
// started before the tests of the enclosing file or describe block and stopped after them.
import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { type RunningServer, startServerProcess } from './process.ts';

export interface UseServerProcessOptions {
  /** The bootstrap organization's slug and its token (MAINLINE_BOOTSTRAP_ORG, MAINLINE_BOOTSTRAP_TOKEN). */
  readonly org: string;
  readonly token: string;
}

/** The running server of `useServerProcess`, usable only inside tests and hooks. */
export interface UsedServerProcess {
  readonly org: string;
  readonly token: string;
  /** Its base URL on loopback. */
  readonly url: string;
  /** The environment a client reads the server from: MAINLINE_URL, MAINLINE_TOKEN, MAINLINE_ORG. */
  readonly clientEnv: Record<string, string>;
  /** POSTs `body` as JSON to `route` with the bootstrap token, over the network as a client would. */
  post(route: string, body: unknown): Promise<Response>;
}

export function useServerProcess(options: UseServerProcessOptions): UsedServerProcess {
  const { org, token } = options;
  let db: TestDatabase | undefined;
  let server: RunningServer | undefined;
  const live = (): RunningServer => {
    if (server === undefined)
      throw new Error('useServerProcess: the server runs only inside tests and hooks');
    return server;
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServerProcess({
      ...db.env,
      MAINLINE_BOOTSTRAP_ORG: org,
      MAINLINE_BOOTSTRAP_TOKEN: token,
      MAINLINE_RATE_LIMIT: '0',
    });
  });
  afterAll(async () => {
    await server?.stop();
    server = undefined;
    await db?.cleanup();
  });
  return {
    org,
    token,
    get url() {
      return live().url;
    },
    get clientEnv() {
      return { MAINLINE_URL: live().url, MAINLINE_TOKEN: token, MAINLINE_ORG: org };
    },
    post: (route, body) =>
      fetch(`${live().url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': token },
        body: JSON.stringify(body),
      }),
  };
}
