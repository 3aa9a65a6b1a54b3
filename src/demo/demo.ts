/**
 * `mainline demo`: a server on a fresh SQLite folder with a local git repository, a handful of pull
 * requests run through the merge queue by a built-in CI, and their test results uploaded, so that
 * every endpoint has real data to show. Everything after the server start goes through the HTTP API
 * on loopback and the git CLI, as a user and their CI would.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { RepoRef } from '../app/repositories.ts';
import { type Config, loadConfig } from '../config.ts';
import { type Server, startServer } from '../main.ts';
import { DemoApi } from './api.ts';
import { DEMO_GITLAB_REPO, DEMO_ORG, type DemoForge, gitForge, gitlabForge } from './forges.ts';
import { GitLabSimulator } from './gitlab-sim/simulator.ts';
import type { DemoSummary } from './results.ts';
import { DemoError, Scenario } from './scenario.ts';

export { DEMO_GITLAB_REPO, DEMO_ORG, DEMO_REPO } from './forges.ts';
export type { DemoPrResult, DemoSummary, DemoTest, DemoTestRun } from './results.ts';
export { DemoError } from './scenario.ts';

const QUEUE_POLL_MS = 200;

export interface DemoOptions {
  /** TCP port on 127.0.0.1 (default 8080); 0 picks a free one. */
  readonly port?: number;
  /** Folder for the database, the git repositories and the CI's reports; default a new temporary folder, removed on close. */
  readonly dataDir?: string;
  /** Seconds the scenario may take before it counts as failed (default 90). */
  readonly timeoutSeconds?: number;
  /** The server's own log level (JSON lines on stdout); default warn. */
  readonly logLevel?: Config['logLevel'];
  /** Receives the progress lines. */
  readonly log?: (line: string) => void;
  /** Aborting stops the scenario, closes the server and rejects. */
  readonly signal?: AbortSignal;
  /**
   * Where the repository lives: the built-in git forge (default), or a project on a GitLab
   * simulator the demo starts on loopback (REST API, git over HTTP, webhooks).
   */
  readonly forge?: 'git' | 'gitlab';
}

export interface Demo {
  readonly url: string;
  /** The forge the scenario ran on; with gitlab, gitlabUrl is the simulator's address. */
  readonly forge: 'git' | 'gitlab';
  readonly gitlabUrl?: string;
  readonly token: string;
  readonly org: string;
  readonly repo: RepoRef;
  readonly dataDir: string;
  /** True when dataDir is a temporary folder that close() removes. */
  readonly temporary: boolean;
  /** The bare repository the demo pushes to (clone it to look around). */
  readonly gitRepository: string;
  readonly summary: DemoSummary;
  /** Stops the local CI and the server (in-flight requests finish), and removes a temporary data folder. */
  close(): Promise<void>;
}

/** A port on 127.0.0.1 nobody listens on right now: the public URL must name the real port. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()));
    });
  });
}

/** The server's configuration: always its own SQLite database in dataDir, whatever DATABASE_URL says. */
export function demoConfig(input: {
  dataDir: string;
  port: number;
  token: string;
  logLevel: Config['logLevel'];
  /** The GitLab simulator's address and credentials (--forge gitlab). */
  gitlab?: { url: string; token: string; webhookSecret: string };
}) {
  return loadConfig(
    {
      HOST: '127.0.0.1',
      PORT: String(input.port),
      MAINLINE_DATA_DIR: input.dataDir,
      MAINLINE_BOOTSTRAP_ORG: DEMO_ORG,
      MAINLINE_BOOTSTRAP_TOKEN: input.token,
      MAINLINE_QUEUE_POLL_MS: String(QUEUE_POLL_MS),
      MAINLINE_SHUTDOWN_TIMEOUT: '5',
      LOG_LEVEL: input.logLevel,
      ...(input.gitlab === undefined
        ? {}
        : {
            MAINLINE_GITLAB_URL: input.gitlab.url,
            MAINLINE_GITLAB_HOST: DEMO_GITLAB_REPO.host,
            MAINLINE_GITLAB_TOKEN: input.gitlab.token,
            MAINLINE_GITLAB_WEBHOOK_SECRET: input.gitlab.webhookSecret,
          }),
    },
    input.dataDir,
  );
}

async function listen(input: Omit<Parameters<typeof demoConfig>[0], 'port'>, port: number): Promise<Server> {
  if (port !== 0) return startServer(demoConfig({ ...input, port }));
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServer(demoConfig({ ...input, port: await freePort() }));
    } catch (error) {
      // Someone took the free port between the probe and the listen: pick another.
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 3) throw error;
    }
  }
}

/** A given data folder must not hold a database already: the demo builds its scenario from nothing. */
async function prepareDataDir(dir: string): Promise<void> {
  if (existsSync(path.join(dir, 'mainline.db')) || existsSync(path.join(dir, 'git'))) {
    throw new DemoError(
      `${dir} already holds Mainline data; give the demo an empty (or new) folder, or leave out --data-dir`,
    );
  }
  await fs.mkdir(dir, { recursive: true });
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= fn();
    return done;
  };
}

/**
 * Runs the whole demo: starts the server, builds the repository and its history, opens the pull
 * requests, runs them through the queue with the local CI, and reads the results back. Resolves when
 * every PR left the queue (or the timeout passed: summary.ok is false then) with the server still
 * running and the CI still watching for new test branches; close() stops both.
 */
export async function runDemo(options: DemoOptions = {}): Promise<Demo> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const deadline = started + (options.timeoutSeconds ?? 90) * 1000;
  const temporary = options.dataDir === undefined;
  const dataDir = temporary
    ? await fs.mkdtemp(path.join(os.tmpdir(), 'mainline-demo-'))
    : path.resolve(options.dataDir as string);
  let server: Server | undefined;
  let scenario: Scenario | undefined;
  let gitlab: GitLabSimulator | undefined;
  const close = once(async () => {
    await scenario?.ci?.stop();
    await gitlab?.close();
    await server?.close();
    if (temporary) await fs.rm(dataDir, { recursive: true, force: true });
  });
  try {
    if (!temporary) await prepareDataDir(dataDir);
    const token = `ml_${randomBytes(32).toString('base64url')}`;
    const forge = options.forge ?? 'git';
    const secrets = {
      token: `glpat-${randomBytes(16).toString('base64url')}`,
      webhookSecret: randomBytes(24).toString('base64url'),
    };
    if (forge === 'gitlab') gitlab = await GitLabSimulator.start(secrets);
    server = await listen(
      {
        dataDir,
        token,
        logLevel: options.logLevel ?? 'warn',
        ...(gitlab === undefined ? {} : { gitlab: { url: gitlab.url, ...secrets } }),
      },
      options.port ?? 8080,
    );
    const url = server.url;
    log(`Mainline demo server at ${url} (organization "${DEMO_ORG}", SQLite in ${dataDir})`);
    const api = new DemoApi(url, token);
    const host: DemoForge =
      gitlab === undefined ? gitForge(api) : await gitlabForge(gitlab, server, url, log);
    scenario = new Scenario(api, host, dataDir, log, options.signal);
    const summary = await scenario.run(deadline, started);
    return {
      url,
      forge,
      ...(gitlab === undefined ? {} : { gitlabUrl: gitlab.url }),
      token,
      org: DEMO_ORG,
      repo: host.repo,
      dataDir,
      temporary,
      gitRepository: scenario.gitDir,
      summary,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
