import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { IngestGate } from '../../app/ingest/gate.ts';
import { QueueMetrics } from '../../app/queue/metrics.ts';
import type { QueueStepListeners } from '../../app/queue/step-listeners.ts';
import type { AuthThrottle } from '../../app/throttle.ts';
import { AppError } from '../../domain/errors.ts';
import type { Tables } from '../../store/schema.ts';

/** Prometheus metrics of one server: a registry of its own, so several apps in one process never mix. */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'status_code'>;
  readonly duration: Histogram<'method' | 'route'>;
  /** The merge queues' metrics, when the app has a database whose queue steps they observe. */
  readonly queues: QueueMetrics | undefined;

  constructor(options: {
    processMetrics: boolean;
    ingestGate?: IngestGate;
    /**
     * The database whose merge queues are read, the app's listeners of their saved steps (counted), and
     * how many queues get labels of their own.
     */
    queues?: { db: Kysely<Tables>; steps: QueueStepListeners; maxQueues: number };
  }) {
    this.requests = new Counter({
      name: 'mainline_http_requests_total',
      help: 'HTTP requests answered, by route template and status code',
      labelNames: ['method', 'route', 'status_code'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'mainline_http_request_duration_seconds',
      help: 'Time from receiving a request to sending the response, by route template',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    const gate = options.ingestGate;
    if (gate !== undefined) {
      new Gauge({
        name: 'mainline_ingest_uploads_active',
        help: 'Uploads being ingested now (at most MAINLINE_INGEST_CONCURRENCY)',
        registers: [this.registry],
        collect() {
          this.set(gate.active);
        },
      });
      new Gauge({
        name: 'mainline_ingest_uploads_waiting',
        help: 'Uploads waiting for their turn to be ingested (their bodies not read yet)',
        registers: [this.registry],
        collect() {
          this.set(gate.waiting);
        },
      });
    }
    this.queues =
      options.queues === undefined
        ? undefined
        : new QueueMetrics(this.registry, options.queues.db, options.queues.steps, options.queues.maxQueues);
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'mainline_' });
  }

  /** Stops observing (the app is closing). */
  close(): void {
    this.queues?.close();
  }
}

/** Compares a presented header with the expected one in constant time. */
function sameBytes(expected: Buffer, presented: string | undefined): boolean {
  const given = Buffer.from(presented ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Records every response (route templates only, so unknown paths cannot blow up label cardinality)
 * and serves GET /metrics, optionally behind a bearer token.
 */
export function registerMetrics(
  app: FastifyInstance,
  metrics: Metrics,
  token: string | undefined,
  guard: { readonly throttle?: AuthThrottle | undefined; readonly now: () => number } = { now: Date.now },
): void {
  const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`);
  app.addHook('onClose', async () => metrics.close());
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route };
    metrics.requests.inc({ ...labels, status_code: String(reply.statusCode) });
    metrics.duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  app.get(
    '/metrics',
    { schema: { tags: ['operations'], summary: 'Prometheus metrics (text format 0.0.4)' } },
    async (request, reply) => {
      if (expected !== undefined && !sameBytes(expected, request.headers.authorization)) {
        // A wrong token counts against the address's budget of failed authentications.
        guard.throttle?.fail(request.ip, guard.now());
        throw new AppError(
          'AUTHENTICATION_REQUIRED',
          'GET /metrics needs Authorization: Bearer <MAINLINE_METRICS_TOKEN>',
        );
      }
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
}
