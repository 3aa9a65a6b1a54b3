import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { collectDefaultMetrics, Gauge, type Metric, Registry } from 'prom-client';
import type { IngestGate } from '../../app/ingest/gate.ts';
import { QueueMetrics } from '../../app/queue/metrics.ts';
import type { QueueStepListeners } from '../../app/queue/step-listeners.ts';
import type { AuthThrottle } from '../../app/throttle.ts';
import { AppError } from '../../domain/errors.ts';
import type { Tables } from '../../store/schema.ts';

const REQUESTS_NAME = 'mainline_http_requests_total';
const DURATION_NAME = 'mainline_http_request_duration_seconds';
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface CountCell {
  readonly labels: { readonly method: string; readonly route: string; readonly status_code: string };
  value: number;
}

interface DurationCell {
  readonly labels: { readonly method: string; readonly route: string };
  /** Observations per bucket (not cumulative), as prom-client keeps them; the last one is +Inf. */
  readonly buckets: number[];
  sum: number;
  count: number;
  /** This method and route's request counts by status code. */
  readonly byStatus: Map<number, CountCell>;
}

/**
 * The request counter and duration histogram, tallied by plain map look-ups: prom-client's inc and
 * observe hash and validate a label object on every call, a fixed cost on every request. At scrape time
 * the cells are handed to the registry in prom-client's own shapes and order (first seen first), so
 * /metrics reads the same, line for line, as from prom-client's Counter and Histogram.
 */
export class RequestTally {
  readonly #byRoute = new Map<string, Map<string, DurationCell>>();
  readonly #durations: DurationCell[] = [];
  readonly #counts: CountCell[] = [];

  constructor(registry: Registry) {
    // The registry reads a metric through its name, help, type, aggregator, get and getForPromString.
    const counts = this.#counts;
    const durations = this.#durations;
    const counter = {
      name: REQUESTS_NAME,
      help: 'HTTP requests answered, by route template and status code',
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({
        name: REQUESTS_NAME,
        help: counter.help,
        type: 'counter',
        aggregator: 'sum',
        values: counts.map((cell) => ({ value: cell.value, labels: cell.labels })),
      }),
      reset: () => this.reset(),
    };
    const histogram = {
      name: DURATION_NAME,
      help: 'Time from receiving a request to sending the response, by route template',
      type: 'histogram',
      aggregator: 'sum',
      getForPromString: async () => ({
        name: DURATION_NAME,
        help: histogram.help,
        type: 'histogram',
        aggregator: 'sum',
        values: durations.flatMap(exportDuration),
      }),
      get: async () => {
        const data = await histogram.getForPromString();
        return {
          ...data,
          values: data.values.map(({ sharedLabels, ...value }) => ({
            ...value,
            labels: { ...value.labels, ...sharedLabels },
          })),
        };
      },
      reset: () => this.reset(),
    };
    registry.registerMetric(counter as unknown as Metric);
    registry.registerMetric(histogram as unknown as Metric);
  }

  /** Counts one answered request and its duration in seconds. */
  record(method: string, route: string, statusCode: number, seconds: number): void {
    let byMethod = this.#byRoute.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.#byRoute.set(route, byMethod);
    }
    let cell = byMethod.get(method);
    if (cell === undefined) {
      cell = {
        labels: { method, route },
        buckets: DURATION_BUCKETS.map(() => 0),
        sum: 0,
        count: 0,
        byStatus: new Map(),
      };
      cell.buckets.push(0);
      byMethod.set(method, cell);
      this.#durations.push(cell);
    }
    let count = cell.byStatus.get(statusCode);
    if (count === undefined) {
      count = { labels: { method, route, status_code: String(statusCode) }, value: 0 };
      cell.byStatus.set(statusCode, count);
      this.#counts.push(count);
    }
    count.value += 1;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && !(seconds <= (DURATION_BUCKETS[bucket] as number))) bucket++;
    cell.buckets[bucket] = (cell.buckets[bucket] as number) + 1;
    cell.sum += seconds;
    cell.count += 1;
  }

  reset(): void {
    this.#byRoute.clear();
    this.#durations.length = 0;
    this.#counts.length = 0;
  }
}

/** One method and route's histogram lines, as prom-client's Histogram exports them. */
function exportDuration(cell: DurationCell) {
  const bucketName = `${DURATION_NAME}_bucket`;
  let total = 0;
  const values: {
    labels: object;
    sharedLabels: object;
    value: number;
    metricName: string;
    exemplar: null | undefined;
  }[] = DURATION_BUCKETS.map((le, i) => {
    total += cell.buckets[i] as number;
    return {
      labels: { le },
      sharedLabels: cell.labels,
      value: total,
      metricName: bucketName,
      exemplar: null,
    };
  });
  values.push(
    {
      labels: { le: '+Inf' },
      sharedLabels: cell.labels,
      value: cell.count,
      metricName: bucketName,
      exemplar: null,
    },
    {
      labels: {},
      sharedLabels: cell.labels,
      value: cell.sum,
      metricName: `${DURATION_NAME}_sum`,
      exemplar: undefined,
    },
    {
      labels: {},
      sharedLabels: cell.labels,
      value: cell.count,
      metricName: `${DURATION_NAME}_count`,
      exemplar: undefined,
    },
  );
  return values;
}

/** Prometheus metrics of one server: a registry of its own, so several apps in one process never mix. */
export class Metrics {
  readonly registry = new Registry();
  /** mainline_http_requests_total and mainline_http_request_duration_seconds. */
  readonly requests: RequestTally;
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
    this.requests = new RequestTally(this.registry);
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
    metrics.requests.record(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
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
