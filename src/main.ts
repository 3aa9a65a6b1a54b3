import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createCaches } from './app/caches.ts';
import { ensureBootstrapToken } from './app/tokens.ts';
import { WebhookDispatcher } from './app/webhooks-out/dispatch.ts';
import { type Config, uploadTempDir } from './config.ts';
import { type Database, openDatabase } from './db/database.ts';
import { createForge } from './forge/router.ts';
import { buildApp } from './http/app.ts';
import { SpoolDir } from './lib/spool.ts';
import { startFailingWindowMoves } from './runner/failing-windows.ts';
import { GitHubEventProcessor, startGitHubEvents } from './runner/github-events.ts';
import { startHealthSweep } from './runner/health-sweep.ts';
import type { Background } from './runner/periodic.ts';
import { QueueRunner, startQueueRunner } from './runner/queue-runner.ts';
import { startWebhookDispatcher } from './runner/webhook-dispatcher.ts';
import { migrateToLatest } from './store/migrate.ts';

export interface Server {
  readonly app: FastifyInstance;
  readonly database: Database;
  /** The address it listens on, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  /** Stops taking requests, lets in-flight ones finish (up to the shutdown timeout), closes the database. */
  close(): Promise<void>;
}

/** Composition root: config → database (migrated) → bootstrap token → HTTP app, listening. */
export async function startServer(config: Config): Promise<Server> {
  const database = openDatabase(config);
  let built: FastifyInstance | undefined;
  try {
    const report = await migrateToLatest(database);
    // Bodies being received spill to files here; those a stopped server left behind are removed.
    const sweptSpools = await new SpoolDir(uploadTempDir(config)).sweep();
    let wakeGitHub = () => {};
    // One set of caches for the process: the HTTP app and the runners below share it.
    const caches = createCaches(config);
    const forge = createForge(config, { db: database.db, caches });
    const app = await buildApp({
      config,
      database,
      caches,
      forge,
      processMetrics: true,
      onGitHubDelivery: () => wakeGitHub(),
    });
    built = app;
    app.log.info(
      {
        database: database.engine,
        location: database.location,
        applied: report.applied,
        staleUploadFilesRemoved: sweptSpools,
      },
      'database ready',
    );
    if (config.bootstrap !== undefined) {
      const outcome = await ensureBootstrapToken(database.db, {
        orgSlug: config.bootstrap.org,
        token: config.bootstrap.token,
        now: Date.now(),
      });
      if (outcome.kind === 'present' && outcome.revoked) {
        app.log.warn(
          { org: config.bootstrap.org },
          'MAINLINE_BOOTSTRAP_TOKEN exists but was revoked; left revoked',
        );
      } else {
        app.log.info({ org: config.bootstrap.org, outcome: outcome.kind }, 'bootstrap token');
      }
    }
    const url = await app.listen({ host: config.host, port: config.port });
    const ctx = { db: database.db, config, now: Date.now, caches };
    const background: Background[] = [];
    if (config.healthSweepSeconds > 0)
      background.push(startHealthSweep(ctx, config.healthSweepSeconds * 1000, app.log));
    // Hourly whatever the periodic pass's setting: else a page's first read of an hour moves the windows.
    background.push(startFailingWindowMoves(ctx, app.log));
    if (config.github !== undefined) {
      const events = startGitHubEvents(new GitHubEventProcessor(ctx, forge, app.log), 5_000, app.log);
      wakeGitHub = events.wake;
      background.push(events);
    }
    if (config.queuePollMs > 0)
      background.push(
        startQueueRunner(
          new QueueRunner(ctx, forge, app.log, { owner: runnerId(config) }),
          config.queuePollMs,
          app.log,
        ),
      );
    if (config.webhookPollMs > 0)
      background.push(
        startWebhookDispatcher(
          new WebhookDispatcher(ctx, app.log, { timeoutMs: config.webhookTimeoutMs }),
          config.webhookPollMs,
          app.log,
        ),
      );
    return {
      app,
      database,
      url,
      close: () => shutdown(app, database, background, config.shutdownTimeoutSeconds),
    };
  } catch (error) {
    // A failed listen (port in use) leaves an app with open resources: close it before the database.
    await built?.close().catch(() => {});
    await database.close();
    throw error;
  }
}

/**
 * The queue runner's lease owner. The embedded SQLite database serves one server, which keeps a stable
 * id in its data folder: restarted after a crash, it resumes its queues at once instead of waiting for
 * its own dead lease to expire. Replicas on PostgreSQL each take a fresh id .
 */
function runnerId(config: Config): string | undefined {
  if (config.databaseUrl !== undefined) return undefined;
  const file = path.join(config.dataDir, 'runner-id');
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    try {
      writeFileSync(file, `${randomUUID()}\n`, { flag: 'wx' });
    } catch {
      // Another start wrote it first: use that one.
    }
    return readFileSync(file, 'utf8').trim() || undefined;
  }
}

async function shutdown(
  app: FastifyInstance,
  database: Database,
  background: readonly Background[],
  timeoutSeconds: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      app.log.warn(`in-flight requests still running after ${timeoutSeconds} s; closing anyway`);
      app.server.closeAllConnections();
      resolve();
    }, timeoutSeconds * 1000);
  });
  await Promise.race([app.close(), deadline]);
  clearTimeout(timer);
  for (const task of background) await task.stop();
  await database.close();
}
