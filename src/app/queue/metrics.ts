// The merge queue's Prometheus metrics (docs/operations.md, "Merge-queue metrics"): counters and
// histograms fed by every engine step this process applies (queueStepFacts), gauges read from the stored
// queue states at each scrape (so every replica reports every queue's current length).
import type { Kysely } from 'kysely';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { queueStepFacts } from '../../domain/queue-step-facts.ts';
import { Lru } from '../../lib/lru.ts';
import { type QueueNames, queueCensus, queueNames } from '../../store/queue/census.ts';
import type { Tables } from '../../store/schema.ts';
import type { QueueStep, QueueStepListeners } from './step-listeners.ts';

type QueueLabel = 'org' | 'repo' | 'branch';
type Labels = Record<QueueLabel, string>;

/** The labels of the queues beyond MAINLINE_METRICS_MAX_QUEUES: their figures are added up under these. */
export const OTHER_QUEUES: Readonly<Labels> = { org: '_other', repo: '_other', branch: '_other' };

/** PR states a queue holds (the ones that have left are counted by mainline_queue_prs_finished_total). */
const HELD_STATES = ['not_ready', 'pending', 'testing', 'tests_passed', 'pending_failure'] as const;

/** Seconds: from 10 s to a day, for waits and runs measured in minutes to hours. */
const BUCKETS = [10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14_400, 28_800, 86_400];

export class QueueMetrics {
  readonly #db: Kysely<Tables>;
  readonly #maxQueues: number;
  /** Label sets given series of their own (at most maxQueues; kept for the process's life, as counters are). */
  readonly #labelled = new Set<string>();
  readonly #labelsByQueue: Lru<Labels>;
  readonly #unlisten: () => void;
  readonly #submitted: Counter<QueueLabel>;
  readonly #finished: Counter<QueueLabel | 'state'>;
  readonly #runsFinished: Counter<QueueLabel | 'kind' | 'status'>;
  readonly #wait: Histogram<QueueLabel>;
  readonly #testing: Histogram<QueueLabel | 'state'>;
  readonly #toMerge: Histogram<QueueLabel>;

  constructor(registry: Registry, db: Kysely<Tables>, steps: QueueStepListeners, maxQueues: number) {
    this.#db = db;
    this.#maxQueues = maxQueues;
    this.#labelsByQueue = new Lru(maxQueues + 100);
    const queue: QueueLabel[] = ['org', 'repo', 'branch'];
    const registers = [registry];
    this.#submitted = new Counter({
      name: 'mainline_queue_prs_submitted_total',
      help: 'Pull requests submitted to a merge queue (a failed or cancelled one submitted again counts again)',
      labelNames: queue,
      registers,
    });
    this.#finished = new Counter({
      name: 'mainline_queue_prs_finished_total',
      help: 'Pull requests that left a merge queue, by how: merged, failed or cancelled',
      labelNames: [...queue, 'state'],
      registers,
    });
    this.#runsFinished = new Counter({
      name: 'mainline_queue_test_runs_finished_total',
      help: 'Test runs that ended, by kind (main, bisection) and status (succeeded, failed, cancelled)',
      labelNames: [...queue, 'kind', 'status'],
      registers,
    });
    this.#wait = new Histogram({
      name: 'mainline_queue_wait_seconds',
      help: 'From a pull request’s submission to its first test run starting (its own checks, the queue ahead, batching)',
      labelNames: queue,
      buckets: BUCKETS,
      registers,
    });
    this.#testing = new Histogram({
      name: 'mainline_queue_testing_seconds',
      help: 'From a pull request’s last move to testing to its merge or failure (the test run, and the merge after it)',
      labelNames: [...queue, 'state'],
      buckets: BUCKETS,
      registers,
    });
    this.#toMerge = new Histogram({
      name: 'mainline_queue_time_to_merge_seconds',
      help: 'From a pull request’s submission to its merge',
      labelNames: queue,
      buckets: BUCKETS,
      registers,
    });
    const census = () => this.#census();
    let current: Promise<Census> | undefined;
    // Both gauges come from one read of the stored states per scrape.
    const read = () => {
      current ??= census().finally(() => {
        current = undefined;
      });
      return current;
    };
    new Gauge({
      name: 'mainline_queue_prs',
      help: 'Pull requests in a merge queue now, by state (read from the stored queues at each scrape)',
      labelNames: [...queue, 'state'],
      registers,
      async collect() {
        const { prs } = await read();
        this.reset();
        for (const { labels, value } of prs) this.inc(labels, value);
      },
    });
    new Gauge({
      name: 'mainline_queue_test_runs_in_progress',
      help: 'Test runs being built or tested now (read from the stored queues at each scrape)',
      labelNames: queue,
      registers,
      async collect() {
        const { runs } = await read();
        this.reset();
        for (const { labels, value } of runs) this.inc(labels, value);
      },
    });
    this.#unlisten = steps.listen((step) => this.#observe(step));
  }

  /** Stops observing the app's queue steps (the app is closing). */
  close(): void {
    this.#unlisten();
  }

  async #observe(step: QueueStep): Promise<void> {
    const facts = queueStepFacts(step.before, step.after, step.now);
    if (
      facts.submitted === 0 &&
      facts.firstTestingWaitMs.length === 0 &&
      facts.left.length === 0 &&
      facts.runsEnded.length === 0
    )
      return;
    const labels = await this.#labelsOf(step.queueId);
    if (labels === undefined) return;
    if (facts.submitted > 0) this.#submitted.inc(labels, facts.submitted);
    for (const ms of facts.firstTestingWaitMs) this.#wait.observe(labels, ms / 1000);
    for (const pr of facts.left) {
      this.#finished.inc({ ...labels, state: pr.state });
      if (pr.state !== 'cancelled' && pr.testingMs !== null)
        this.#testing.observe({ ...labels, state: pr.state }, pr.testingMs / 1000);
      if (pr.state === 'merged') this.#toMerge.observe(labels, pr.sinceSubmittedMs / 1000);
    }
    for (const run of facts.runsEnded)
      this.#runsFinished.inc({ ...labels, kind: run.kind, status: run.status });
  }

  async #labelsOf(queueId: string): Promise<Labels | undefined> {
    if (this.#maxQueues === 0) return OTHER_QUEUES;
    const known = this.#labelsByQueue.get(queueId);
    if (known !== undefined) return known;
    const names = await queueNames(this.#db, queueId);
    if (names === undefined) return undefined;
    const labels = this.#bounded(names);
    this.#labelsByQueue.set(queueId, labels);
    return labels;
  }

  /** A queue's own labels while fewer than maxQueues label sets exist, else OTHER_QUEUES. */
  #bounded(names: QueueNames): Labels {
    const labels = {
      org: names.org_slug,
      repo: `${names.host}/${names.owner}/${names.name}`,
      branch: names.branch,
    };
    const key = `${labels.org}\u0000${labels.repo}\u0000${labels.branch}`;
    if (this.#labelled.has(key)) return labels;
    if (this.#labelled.size >= this.#maxQueues) return OTHER_QUEUES;
    this.#labelled.add(key);
    return labels;
  }

  async #census(): Promise<Census> {
    const prs: Census['prs'] = [];
    const runs: Census['runs'] = [];
    for (const row of await queueCensus(this.#db)) {
      const labels = this.#bounded(row);
      for (const held of HELD_STATES) {
        prs.push({ labels: { ...labels, state: held }, value: row.prs.get(held) ?? 0 });
      }
      runs.push({ labels, value: row.activeRuns });
    }
    return { prs, runs };
  }
}

interface Census {
  prs: { labels: Labels & { state: string }; value: number }[];
  runs: { labels: Labels; value: number }[];
}
