import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { type Caches, createCaches } from '../app/caches.ts';
import type { AppContext } from '../app/context.ts';
import { IngestGate } from '../app/ingest/gate.ts';
import { ParserPool } from '../app/ingest/parsing/pool.ts';
import { PageTokens } from '../app/page-token.ts';
import type { Forge } from '../app/ports.ts';
import { AuthThrottle } from '../app/throttle.ts';
import { UrlSigner } from '../app/url-signer.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { AppError } from '../domain/errors.ts';
import { createForge } from '../forge/router.ts';
import { getOrCreateSecret } from '../store/tenancy/secrets.ts';
import { registerDashboard } from '../web/routes.ts';
import { registerBodyChecks } from './body-checks.ts';
import { registerIngestMetrics } from './ingest-metrics.ts';
import { loggerOptions } from './logging.ts';
import { authHook } from './plugins/auth.ts';
import { clientErrorHandler, registerErrorHandling, rememberRequestId, sendError } from './plugins/errors.ts';
import { Metrics, registerMetrics } from './plugins/metrics.ts';
import { RateLimiter } from './plugins/rate-limit.ts';
import { registerGetTestDetails } from './routes/flaky-tests/get-test-details.ts';
import { registerLinkTicket } from './routes/flaky-tests/link-ticket.ts';
import { registerListFailing } from './routes/flaky-tests/list-failing.ts';
import { registerListQuarantined } from './routes/flaky-tests/list-quarantined.ts';
import { registerListUnhealthy } from './routes/flaky-tests/list-unhealthy.ts';
import { registerSettings } from './routes/flaky-tests/settings.ts';
import { registerTestControls } from './routes/flaky-tests/test-controls.ts';
import { registerGitForgeRoutes } from './routes/git/git-forge.ts';
import { registerGitHubWebhook } from './routes/github/webhook.ts';
import { registerGitLabWebhook } from './routes/gitlab/webhook.ts';
import { registerCreateQueue } from './routes/merge-queue/create-queue.ts';
import { registerDeleteQueue } from './routes/merge-queue/delete-queue.ts';
import { registerGetQueue } from './routes/merge-queue/get-queue.ts';
import { registerGetSubmittedPr } from './routes/merge-queue/get-submitted-pr.ts';
import { registerPrActions } from './routes/merge-queue/pr-actions.ts';
import { registerQueueReads } from './routes/merge-queue/reads.ts';
import { registerSetImpactedTargets } from './routes/merge-queue/set-impacted-targets.ts';
import { registerUpdateQueue } from './routes/merge-queue/update-queue.ts';
import { registerCreateBundleUpload } from './routes/metrics/create-bundle-upload.ts';
import { registerGetQuarantineConfig } from './routes/metrics/get-quarantine-config.ts';
import { registerRawRoutes } from './routes/metrics/raw-routes.ts';
import { registerHealth } from './routes/ops/health.ts';
import { registerStatus } from './routes/ops/status.ts';
import { registerCreateRepository } from './routes/repositories/create.ts';
import { registerGetRepository } from './routes/repositories/get.ts';
import { registerListRepositories } from './routes/repositories/list.ts';
import { registerUpload } from './routes/test-results/upload.ts';
import { registerCreateWebhook } from './routes/webhooks/create.ts';
import { registerDeleteWebhook } from './routes/webhooks/delete.ts';
import { registerWebhookDeliveries } from './routes/webhooks/deliveries.ts';
import { registerListWebhooks } from './routes/webhooks/list.ts';
import type { Api, RouteDeps } from './types.ts';

export interface BuildOptions {
  readonly config: Config;
  /** An open, migrated database. */
  readonly database: Database;
  /** Epoch-ms clock; defaults to Date.now. */
  readonly now?: () => number;
  /** The forge the merge queue acts through; defaults to the plain-git forge under config.gitRoot. */
  readonly forge?: Forge;
  /** Called when a new GitHub webhook delivery was stored (wakes the processor). */
  readonly onGitHubDelivery?: () => void;
  /** Include process-level metrics (CPU, memory, event loop) in /metrics; on for real servers. */
  readonly processMetrics?: boolean;
  /** The process's caches, shared with its runners (app/caches.ts); made from the config when absent. */
  readonly caches?: Caches;
}

/** Route modules of the authenticated /v1 API; each registers one endpoint. */
const V1_ROUTES: ReadonlyArray<(app: Api, deps: RouteDeps) => void> = [
  registerCreateRepository,
  registerGetRepository,
  registerListRepositories,
  registerUpload,
  registerListUnhealthy,
  registerListQuarantined,
  registerGetTestDetails,
  registerListFailing,
  registerLinkTicket,
  registerSettings,
  registerTestControls,
  registerCreateBundleUpload,
  registerGetQuarantineConfig,
  registerCreateQueue,
  registerGetQueue,
  registerUpdateQueue,
  registerDeleteQueue,
  registerPrActions,
  registerGetSubmittedPr,
  registerSetImpactedTargets,
  registerQueueReads,
  registerGitForgeRoutes,
  registerCreateWebhook,
  registerListWebhooks,
  registerDeleteWebhook,
  registerWebhookDeliveries,
];

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honours a sane incoming x-request-id (so ids follow a request across proxies), else makes one. */
function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  // Remembered by raw request: an error Node raises mid-request (the request timeout) quotes the same id.
  return rememberRequestId(
    req,
    typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID(),
  );
}

async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Mainline API',
        version: '1',
        description:
          'Flaky-test detection, quarantine and merge queue; wire-compatible with Trunk’s public v1 API. Every /v1 endpoint except GET /v1/status needs the x-api-token header.',
      },
      servers: [{ url: config.publicUrl }],
      components: { securitySchemes: { apiToken: { type: 'apiKey', in: 'header', name: 'x-api-token' } } },
      security: [{ apiToken: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Builds the whole HTTP application. main.ts and the tests both call this. */
export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config, database } = options;
  const now = options.now ?? Date.now;
  const caches = options.caches ?? createCaches(config);
  const parsers = new ParserPool({ threads: config.parseThreads, derivation: caches.derivation });
  const ingestGate = new IngestGate(config.ingestConcurrency);
  const authThrottle = new AuthThrottle({
    perMinute: config.authFailLimitPerMinute,
    burst: config.authFailBurst,
    maxAddresses: config.authFailAddresses,
  });
  const ctx: AppContext = {
    db: database.db,
    config,
    now,
    authThrottle,
    caches,
  };
  const secret = (name: string) =>
    getOrCreateSecret(database.db, name, randomBytes(32).toString('base64url'), now());
  let accepting = true;
  const deps: RouteDeps = {
    ctx,
    database,
    pageTokens: new PageTokens(await secret('page_tokens')),
    urlSigner: new UrlSigner(await secret('signed_urls')),
    parseJunit: parsers.parse,
    ingestGate,
    forge: options.forge ?? createForge(config, { db: database.db, now, caches }),
    isAccepting: () => accepting,
  };

  const app = Fastify({
    ...loggerOptions(config),
    bodyLimit: config.bodyLimitBytes,
    genReqId: requestId,
    requestIdHeader: false,
    // A client that sends its request too slowly is cut off instead of holding a connection for ever.
    requestTimeout: config.requestTimeoutSeconds * 1000,
    // Node checks for timed-out requests every 30 s by default: a short timeout is checked more often.
    // Its headers timeout (60 s by default) must not exceed the request timeout, or Node swaps the two
    // and a stalled body would get 60 s whatever MAINLINE_REQUEST_TIMEOUT says.
    http: {
      connectionsCheckingInterval: Math.min(30_000, Math.max(250, config.requestTimeoutSeconds * 100)),
      headersTimeout: Math.min(60_000, config.requestTimeoutSeconds * 1000),
    },
    // Errors Node raises before Fastify sees a request (431, 408, a malformed request line) in the envelope.
    clientErrorHandler: clientErrorHandler(config.requestTimeoutSeconds),
    // request.ip is the socket's peer unless the operator names the proxies in front (MAINLINE_TRUST_PROXY).
    ...(config.trustProxy.length > 0 ? { trustProxy: [...config.trustProxy] } : {}),
    // A URL Fastify cannot even route (a malformed percent-escape) gets the same error envelope.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      sendError(reply, new AppError('BAD_REQUEST', `The request could not be read: ${error.message}`));
    },
  }).withTypeProvider();
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  app.removeContentTypeParser('text/plain');
  // Hooks on every request take `done` rather than returning a promise: one microtask less each.
  // The id is set as the request arrives, not in onSend: an error's answer keeps the headers set before
  // it, and a route with no onSend hook skips Fastify's onSend runner on every answer.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('preClose', async () => {
    accepting = false;
  });
  app.addHook('onClose', () => parsers.close());
  registerErrorHandling(app, config.bodyLimitBytes);
  // NUL refusal and surrogate repair of every request's strings; clean JSON bodies are not walked.
  registerBodyChecks(app, caches.parsedBodies);
  // A failed background fold of the duration means is logged with the server's logger; the idle
  // folds' timers are dropped and the running folds awaited before the database closes.
  caches.meansFolds.log = app.log;
  app.addHook('onClose', () => caches.meansFolds.close());
  const metrics = new Metrics({
    processMetrics: options.processMetrics ?? false,
    ingestGate,
    // Repository and branch names are tenants' data: queues are named only behind the metrics token.
    queues: {
      db: database.db,
      steps: caches.queueSteps,
      maxQueues: config.metricsToken === undefined ? 0 : config.metricsMaxQueues,
    },
  });
  registerIngestMetrics(metrics.registry, parsers);
  registerMetrics(app, metrics, config.metricsToken, { throttle: authThrottle, now });
  await registerOpenApi(app, config);

  const api = app as unknown as Api;
  registerStatus(api, deps);
  registerHealth(api, deps);
  const limiter = new RateLimiter(config.rateLimitPerSecond, config.rateLimitBurst);
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', authHook(ctx, limiter));
      for (const register of V1_ROUTES) register(v1 as unknown as Api, deps);
    },
    { prefix: '/v1' },
  );
  await app.register(async (raw) => registerRawRoutes(raw as unknown as Api, deps), { prefix: '/v1' });
  const onDelivery = options.onGitHubDelivery ?? (() => {});
  await app.register(async (hooks) => registerGitHubWebhook(hooks as unknown as Api, deps, onDelivery));
  await app.register(async (hooks) => registerGitLabWebhook(hooks as unknown as Api, deps));
  // The web dashboard (docs/dashboard.md): pages at the html_url links, signed in with an API token.
  await registerDashboard(app, deps, await secret('dashboard_sessions'));
  await app.ready();
  return app;
}
