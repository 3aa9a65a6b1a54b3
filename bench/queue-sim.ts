/**
 * Merge-queue bench: the pure engine (src/domain/queue) driven by a simulated CI and forge on simulated
 * time. Reports PRs merged per hour against the throughput ceilings of mergequeue.md §1c for single,
 * speculative, anti-flake, batching and parallel configurations, and the engine's cost per event with
 * 1,000 PRs queued. Deterministic: seeded PRNGs, no wall-clock waits (wall time is only measured).
 */
import {
  createQueueState,
  nextWakeAt,
  pruneHistory,
  type QueueAction,
  type QueueEvent,
  type QueueSettings,
  type QueueState,
  step,
  type TestRun,
} from '../src/domain/queue/index.ts';
import { type CiRun, exponential, mulberry32, SimulatedCi, type SuiteParams, TimedHeap } from './queue-ci.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2025, 0, 6, 0, 0, 0);
const REQUIRED_CHECK = 'ci';

/** Which closed form of mergequeue.md §1c bounds a configuration. */
export type CeilingKind =
  | 'serial'
  | 'speculative'
  | 'anti_flake'
  | 'serial_batch'
  | 'combined_batch'
  | 'lanes';

export interface QueueScenario {
  id: string;
  label: string;
  mode: 'single' | 'parallel';
  concurrency: number;
  /** Batching on with this batchingMinSize (bisection with bisection_skip_redundant_tests). */
  batchSize?: number;
  /** canOptimisticallyMerge + pendingFailureDepth 1 ("anti-flake protection"). */
  antiFlake?: boolean;
  /** Parallel mode: each PR impacts one of this many independent targets. */
  targets?: number;
  ceiling: CeilingKind;
  /**
   * Warm-up of this configuration instead of the bench's: with side bisection at C > 1 the PRs waiting in
   * bisections start at zero and build up over the first day (bench/queue-ideal.ts SETTLE_HOURS), so a
   * window from hour 1 measures that start-up, not the queue's capacity.
   */
  warmupHours?: number;
  /** Seeds to run at least (the warm-up makes each seed dear, so the events cap would stop at one). */
  minReplications?: number;
}

export const DEFAULT_SCENARIOS: QueueScenario[] = [
  { id: 'serial', label: 'single, concurrency 1', mode: 'single', concurrency: 1, ceiling: 'serial' },
  {
    id: 'spec5',
    label: 'single, concurrency 5',
    mode: 'single',
    concurrency: 5,
    ceiling: 'speculative',
  },
  {
    id: 'spec25',
    label: 'single, concurrency 25',
    mode: 'single',
    concurrency: 25,
    ceiling: 'speculative',
  },
  {
    id: 'antiflake5',
    label: 'single, concurrency 5, optimistic + pending-failure depth 1',
    mode: 'single',
    concurrency: 5,
    antiFlake: true,
    ceiling: 'anti_flake',
  },
  {
    id: 'batch4',
    label: 'batching 4, concurrency 1, bisection',
    mode: 'single',
    concurrency: 1,
    batchSize: 4,
    ceiling: 'serial_batch',
  },
  {
    id: 'batch4c5',
    label: 'batching 4, concurrency 5, bisection',
    mode: 'single',
    concurrency: 5,
    batchSize: 4,
    ceiling: 'combined_batch',
    warmupHours: 48,
    minReplications: 3,
  },
  {
    id: 'parallel4',
    label: 'parallel, 4 independent targets, concurrency 20',
    mode: 'parallel',
    concurrency: 20,
    targets: 4,
    ceiling: 'lanes',
  },
];

export interface QueueBenchOptions {
  seed?: number;
  /** Measured window (simulated hours), after the warm-up. */
  hours?: number;
  warmupHours?: number;
  /** Mean CI duration T, minutes. */
  durationMinutes?: number;
  /** Run durations are uniform in T·(1 ± jitter). */
  jitter?: number;
  /** Probability p that a PR really breaks the build. */
  failureRate?: number;
  /**
   * Saturated runs are replicated with seeds seed, seed+1, … until at least minMerged PRs merged in
   * total (at most maxReplications, and no new seed once maxEvents engine events were spent on the
   * configuration): one 24 h seed of a slow configuration is noisy (±15%).
   */
  minMerged?: number;
  maxReplications?: number;
  maxEvents?: number;
  /** Flake rates f to run every scenario with. */
  flakeRates?: number[];
  scenarios?: QueueScenario[];
  /** Latency table: Poisson arrivals at this fraction of each scenario's saturated processing rate. */
  arrivalLoad?: number;
  /** Flake rate used for the latency table (null: skip the table). */
  latencyFlakeRate?: number | null;
  /**
   * Drop finished test runs that nothing references any more (their branch is deleted) from the state
   * between events. Decision-neutral (the engine only reads runs it references or that are active) and
   * keeps the simulation fast; the engine itself never forgets a run, see stepMicros.
   */
  pruneRuns?: boolean;
  /** PRs queued for the engine-cost measurement. */
  costPrs?: number;
  /** Timed step() calls per event type. */
  costIterations?: number;
  log?: (line: string) => void;
}

export type Resolved = Required<Omit<QueueBenchOptions, 'log'>> & { log: (line: string) => void };

export interface Ceiling {
  name: string;
  formula: string;
  perHour: number;
}

export interface ScenarioResult {
  scenario: string;
  label: string;
  arrival: 'saturated' | 'poisson';
  flakeRate: number;
  /** Simulated hours before the measured window. */
  warmupHours: number;
  /** Seeds simulated (each `hours` long); counts below are totals over them, rates are means. */
  replications: number;
  /** Lowest and highest merged/h of a single replication. */
  mergedPerHourRange: [number, number];
  /** Poisson arrival rate, PRs/h (0 when saturated). */
  arrivalPerHour: number;
  mergedPerHour: number;
  /** Merged plus ejected, per hour: what the queue got through. */
  processedPerHour: number;
  ceiling: Ceiling;
  /** mergedPerHour / ceiling. */
  ratio: number;
  merged: number;
  ejectedBad: number;
  /** Good PRs that ended failed (wrong ejections). */
  ejectedGood: number;
  /** Safety: bad PRs merged, and merges whose tree no passing run tested on the then-current target. */
  badMerged: number;
  untestedMerges: number;
  runsStarted: number;
  runsCancelled: number;
  runsPerMerged: number;
  ciHoursPerMerged: number;
  meanQueueMinutes: number;
  p95QueueMinutes: number;
  /** PRs still queued at the end of the window. */
  openAtEnd: number;
  /** Set when the engine stopped making progress (no merge for 10·T with PRs queued). */
  stall: string | null;
  events: number;
  /** Mean wall time of one step() during the simulation, µs (grows with the state's history). */
  stepMicros: number;
  /** Entries kept in the state at the end: PRs and runs (the engine never forgets either). */
  statePrs: number;
  stateRuns: number;
  stateKiB: number;
}

export interface CostResult {
  setup: string;
  event: string;
  iterations: number;
  medianMicros: number;
  p99Micros: number;
  meanMicros: number;
  actions: number;
  /** Not a step: what the runner adds per event to store the state (JSON.parse + JSON.stringify). */
  persistence?: true;
}

export interface QueueBenchReport {
  params: {
    seed: number;
    hours: number;
    warmupHours: number;
    durationMinutes: number;
    jitter: number;
    failureRate: number;
    flakeRates: number[];
    arrivalLoad: number;
    latencyFlakeRate: number | null;
    pruneRuns: boolean;
    minMerged: number;
    maxReplications: number;
    maxEvents: number;
    costPrs: number;
    costIterations: number;
  };
  throughput: ScenarioResult[];
  latency: ScenarioResult[];
  cost: CostResult[];
  seconds: number;
}

export function resolve(o: QueueBenchOptions): Resolved {
  return {
    seed: o.seed ?? 20250106,
    hours: o.hours ?? 24,
    warmupHours: o.warmupHours ?? 1,
    durationMinutes: o.durationMinutes ?? 30,
    jitter: o.jitter ?? 0.1,
    failureRate: o.failureRate ?? 0.05,
    flakeRates: o.flakeRates ?? [0, 0.05, 0.15],
    scenarios: o.scenarios ?? DEFAULT_SCENARIOS,
    arrivalLoad: o.arrivalLoad ?? 0.7,
    latencyFlakeRate: o.latencyFlakeRate === undefined ? 0.05 : o.latencyFlakeRate,
    pruneRuns: o.pruneRuns ?? true,
    minMerged: o.minMerged ?? 500,
    maxReplications: o.maxReplications ?? 5,
    maxEvents: o.maxEvents ?? 6000,
    costPrs: o.costPrs ?? 1000,
    costIterations: o.costIterations ?? 100,
    log: o.log ?? (() => {}),
  };
}

// ---------------------------------------------------------------------------------------------------
// Ceilings (mergequeue.md §1c, "Simple models"): T = CI duration, C = concurrency, q ≈ p + f,
// B = batch size, k = independent target groups.

/** Σ_{k=0}^{C−1}(1−q)^k / T = (1−(1−q)^C)/(q·T); C/T when q = 0. */
function speculative(q: number, c: number, tHours: number): number {
  return q === 0 ? c / tHours : (1 - (1 - q) ** c) / (q * tHours);
}

export function ceilingFor(s: QueueScenario, p: number, f: number, tMinutes: number): Ceiling {
  const t = tMinutes / 60;
  const q = p + f;
  const c = s.concurrency;
  const b = s.batchSize ?? 1;
  switch (s.ceiling) {
    case 'serial':
      return { name: 'serial, no speculation', formula: '1/T', perHour: 1 / t };
    case 'speculative':
      return { name: 'speculative window C', formula: '(1−(1−q)^C)/(q·T)', perHour: speculative(q, c, t) };
    case 'anti_flake':
      return {
        name: 'anti-flake (q → p)',
        formula: '(1−(1−p)^C)/(p·T)',
        perHour: speculative(p, c, t),
      };
    case 'serial_batch':
      return { name: 'serial batch B', formula: 'B·(1−q)^B/T', perHour: (b * (1 - q) ** b) / t };
    case 'combined_batch':
      return {
        name: 'combined, C batches of B',
        formula: 'C·B·(1−q)^B/T',
        perHour: (c * b * (1 - q) ** b) / t,
      };
    case 'lanes': {
      const k = s.targets ?? 1;
      return {
        name: 'speculative per lane × k',
        formula: 'k·(1−(1−q)^(C/k))/(q·T)',
        perHour: k * speculative(q, c / k, t),
      };
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The simulation.

export type CiReported = Extract<QueueEvent, { type: 'ci_reported' }>;

type SimEvent = { kind: 'arrival' } | { kind: 'ci'; runId: string } | { kind: 'tick' };

interface SimPr {
  bad: boolean;
  target: string;
  submittedAt: number;
  end: 'merged' | 'failed' | 'cancelled' | null;
  endedAt: number;
}

export interface RunConfig {
  scenario: QueueScenario;
  /** Debugging: called after every step with the event and the actions it produced. */
  trace?: (now: number, event: QueueEvent, actions: QueueAction[], state: QueueState) => void;
  flakeRate: number;
  /** Saturated: keep `backlog` PRs submitted; else Poisson arrivals at arrivalPerHour. */
  backlog: number;
  arrivalPerHour: number;
  /** Test-suite model for the CI (which tests fail in a failed run); none by default. */
  suite?: SuiteParams;
  /**
   * What the server sends the engine when a run's checks have all reported (default: the report
   * itself); the flake-protection bench judges failed runs by their failing tests here.
   */
  report?: (report: CiReported, ci: CiRun, run: TestRun, sim: QueueSim) => QueueEvent[];
}

function settingsFor(s: QueueScenario): Partial<QueueSettings> {
  const batching = s.batchSize !== undefined;
  return {
    mode: s.mode,
    concurrency: s.concurrency,
    bisectionConcurrency: Math.max(2, 2 * s.concurrency),
    directMergeMode: 'off',
    canOptimisticallyMerge: s.antiFlake ?? false,
    pendingFailureDepth: s.antiFlake ? 1 : 0,
    batch: batching,
    batchingMinSize: s.batchSize ?? 4,
    batchingMaxWaitTimeMinutes: 5,
    optimizationMode: batching ? 'bisection_skip_redundant_tests' : 'off',
  };
}

/**
 * Enough submitted PRs to keep every testing slot busy (plus those waiting on a failure or a merge).
 * With batching, the idealised queue's 2·C·B + 4·k + 4 (bench/queue-ideal.ts): with ⌈1.5·C·B⌉ + 4·k the
 * PRs passed and waiting to merge left too few pending at B = 4, C = 5, and 6% of the batches started
 * with 2 PRs after batchingMaxWaitTimeMinutes (seed 20250106, 400 h).
 */
export function backlogFor(s: QueueScenario): number {
  const c = s.concurrency;
  const k = s.targets ?? 1;
  if (s.batchSize !== undefined) return 2 * c * s.batchSize + 4 * k + 4;
  return Math.ceil(1.5 * c) + 4 * k;
}

export class QueueSim {
  state: QueueState;
  now = T0;
  readonly heap = new TimedHeap<SimEvent>();
  readonly prs = new Map<number, SimPr>();
  readonly ci: SimulatedCi;
  private readonly inbox: QueueEvent[] = [];
  private readonly prRand: () => number;
  private readonly arrivalRand: () => number;
  private readonly history: { sha: string; pr: number | null }[] = [{ sha: 'main-0', pr: null }];
  private readonly ticks = new Set<number>();
  private nextPr = 1;
  open = 0;
  lastMergeAt = T0;
  events = 0;
  stepNanos = 0n;
  untestedMerges = 0;
  badMerged = 0;
  runsInWindow = 0;
  readonly windowStart: number;
  readonly windowEnd: number;

  constructor(
    private readonly opts: Resolved,
    private readonly cfg: RunConfig,
  ) {
    this.windowStart = T0 + opts.warmupHours * HOUR;
    this.windowEnd = this.windowStart + opts.hours * HOUR;
    // Common random numbers: every scenario sees the same PR stream and the same CI dice.
    this.prRand = mulberry32(opts.seed);
    this.arrivalRand = mulberry32(opts.seed ^ 0x5bd1e995);
    const ciRand = mulberry32((opts.seed * 31 + Math.round(cfg.flakeRate * 1000)) >>> 0);
    this.ci = new SimulatedCi(
      {
        durationMinutes: opts.durationMinutes,
        jitter: opts.jitter,
        flakeRate: cfg.flakeRate,
        suite: cfg.suite,
      },
      ciRand,
      (n) => this.prs.get(n)?.bad ?? false,
      mulberry32((opts.seed * 37 + 0x2545f491) >>> 0),
    );
    this.state = createQueueState({
      branch: 'main',
      targetHead: 'main-0',
      idSeed: 'run',
      concurrency: cfg.scenario.concurrency,
      settings: settingsFor(cfg.scenario),
    });
    this.send({ type: 'required_statuses_discovered', branchProtection: [REQUIRED_CHECK] });
  }

  /** Feed one event, then the forge's immediate answers, to the engine. */
  send(event: QueueEvent): void {
    this.inbox.push(event);
    for (let ev = this.inbox.shift(); ev; ev = this.inbox.shift()) {
      const t0 = process.hrtime.bigint();
      const { state, actions } = step(this.state, ev, this.now);
      this.stepNanos += process.hrtime.bigint() - t0;
      this.events += 1;
      this.state = state;
      this.cfg.trace?.(this.now, ev, actions, state);
      for (const a of actions) this.forge(a);
    }
  }

  inWindow(): boolean {
    return this.now >= this.windowStart && this.now < this.windowEnd;
  }

  private forge(a: QueueAction): void {
    switch (a.type) {
      case 'create_test_run': {
        const run = this.ci.start(
          a.runId,
          a.prHeads.map((h) => h.number),
          this.now,
        );
        if (this.inWindow()) this.runsInWindow += 1;
        this.heap.push(run.finishAt, { kind: 'ci', runId: a.runId });
        this.inbox.push({ type: 'test_branch_built', runId: a.runId, sha: `sha-${a.runId}` });
        return;
      }
      case 'delete_test_branch':
        if (a.cancelCi) this.ci.cancel(a.runId, this.now);
        return;
      case 'merge_pr': {
        this.checkSafety(a.prNumber);
        const sha = `main-${this.history.length}`;
        this.history.push({ sha, pr: a.prNumber });
        this.inbox.push({ type: 'merge_succeeded', prNumber: a.prNumber, newTargetSha: sha });
        return;
      }
      case 'report_pr_state': {
        const p = this.prs.get(a.prNumber);
        const terminal = a.state === 'merged' || a.state === 'failed' || a.state === 'cancelled';
        if (!p || !terminal || p.end !== null) return;
        p.end = a.state as 'merged' | 'failed' | 'cancelled';
        p.endedAt = this.now;
        this.open -= 1;
        if (a.state === 'merged') this.lastMergeAt = this.now;
        return;
      }
    }
  }

  /** The merged tree must be what a passing run tested: its base plus exactly the PRs merged since. */
  private checkSafety(n: number): void {
    const p = this.prs.get(n);
    if (p?.bad) this.badMerged += 1;
    const entry = this.state.prs.get(n);
    const run = entry?.proofRunId ? this.state.runs[entry.proofRunId] : undefined;
    const baseAt = run ? this.history.findIndex((h) => h.sha === run.baseSha) : -1;
    if (run?.status !== 'succeeded' || baseAt < 0) {
      this.untestedMerges += 1;
      return;
    }
    const since = this.history.slice(baseAt + 1).map((h) => h.pr);
    const inBranch = new Set([...run.dependsOn, ...run.tested]);
    const parallel = this.cfg.scenario.mode === 'parallel';
    const alien = since.some(
      (m) => m !== null && !inBranch.has(m) && (!parallel || this.prs.get(m)?.target === p?.target),
    );
    const ahead = run.prHeads.map((h) => h.number);
    const missing = ahead.slice(0, ahead.indexOf(n)).some((m) => !since.includes(m));
    if (alien || missing) this.untestedMerges += 1;
  }

  private submitOne(): void {
    const n = this.nextPr++;
    // Draw both values for every PR so the stream is the same in every scenario.
    const bad = this.prRand() < this.opts.failureRate;
    const target = `t${Math.floor(this.prRand() * (this.cfg.scenario.targets ?? 1))}`;
    this.prs.set(n, { bad, target, submittedAt: this.now, end: null, endedAt: 0 });
    this.open += 1;
    const headSha = `pr${n}-head`;
    this.send({
      type: 'pr_submitted',
      pr: {
        number: n,
        title: `PR ${n}`,
        author: 'dev',
        headSha,
        baseSha: 'old-main',
        baseBranch: 'main',
        mergeability: 'mergeable',
      },
      // The PR's own CI passed on its head: it is ready to queue.
      checks: [{ name: REQUIRED_CHECK, outcome: 'passed' }],
    });
    if (this.cfg.scenario.mode === 'parallel') {
      this.send({ type: 'impacted_targets_set', prNumber: n, headSha, targets: [target] });
    }
  }

  /**
   * Forget what no decision can read any more, as the server does after every event (pruneHistory,
   * decision-neutral: running with pruneRuns off gives identical results).
   */
  private prune(): void {
    this.state = pruneHistory(this.state).state;
  }

  /** Queued PRs set aside for bisection or under test in a bisection segment. */
  private bisecting(): number {
    let n = 0;
    for (const b of this.state.bisections)
      for (const x of b.nodes[0]?.prs ?? []) {
        const e = this.state.prs.get(x);
        const run = e?.runId ? this.state.runs[e.runId] : undefined;
        if (
          e?.state === 'testing' &&
          (run === undefined ||
            run.kind === 'bisection' ||
            run.status === 'failed' ||
            run.status === 'cancelled')
        )
          n += 1;
      }
    return n;
  }

  private scheduleWake(): void {
    const wake = nextWakeAt(this.state);
    if (wake === null || wake <= this.now || this.ticks.has(wake)) return;
    this.ticks.add(wake);
    this.heap.push(wake, { kind: 'tick' });
  }

  run(): ScenarioResult {
    const { cfg, opts } = this;
    const saturated = cfg.arrivalPerHour === 0;
    const meanGap = saturated ? 0 : HOUR / cfg.arrivalPerHour;
    if (!saturated) this.heap.push(this.now + exponential(this.arrivalRand, meanGap), { kind: 'arrival' });
    let stall: string | null = null;
    const stallAfter = 10 * opts.durationMinutes * MINUTE;
    // Saturated: `backlog` PRs in the line; PRs of a failed batch being bisected do not count.
    const refill = () => {
      if (!saturated) return;
      let open = this.open - this.bisecting();
      for (; open < cfg.backlog; open += 1) this.submitOne();
    };
    refill();
    this.scheduleWake();
    for (;;) {
      const next = this.heap.pop();
      if (next === undefined) {
        stall = `no pending event at ${hours(this.now)} with ${this.open} PRs queued`;
        break;
      }
      if (next.at >= this.windowEnd) break;
      this.now = next.at;
      const ev = next.value;
      if (ev.kind === 'arrival') {
        this.submitOne();
        this.heap.push(this.now + exponential(this.arrivalRand, meanGap), { kind: 'arrival' });
      } else if (ev.kind === 'ci') {
        const run = this.ci.finish(ev.runId);
        const testRun = this.state.runs[ev.runId];
        if (run && testRun?.status === 'in_progress') {
          const outcome = run.passes ? 'passed' : 'failed';
          const report: CiReported = {
            type: 'ci_reported',
            runId: ev.runId,
            checks: [{ name: REQUIRED_CHECK, outcome }],
          };
          for (const e of cfg.report ? cfg.report(report, run, testRun, this) : [report]) this.send(e);
        }
      } else {
        this.ticks.delete(this.now);
        this.send({ type: 'tick' });
      }
      refill();
      if (opts.pruneRuns) this.prune();
      this.scheduleWake();
      if (this.open > 0 && this.now - this.lastMergeAt > stallAfter) {
        stall = `no merge for ${Math.round((this.now - this.lastMergeAt) / MINUTE)} min at ${hours(this.now)} with ${this.open} PRs queued`;
        break;
      }
    }
    return this.result(stall);
  }

  private result(stall: string | null): ScenarioResult {
    const { cfg, opts } = this;
    const within = (p: SimPr) =>
      p.end !== null && p.endedAt >= this.windowStart && p.endedAt < this.windowEnd;
    const ended = [...this.prs.values()].filter(within);
    const merged = ended.filter((p) => p.end === 'merged');
    const failed = ended.filter((p) => p.end === 'failed');
    const waits = merged.map((p) => (p.endedAt - p.submittedAt) / MINUTE).sort((a, b) => a - b);
    const ceiling = ceilingFor(cfg.scenario, opts.failureRate, cfg.flakeRate, opts.durationMinutes);
    const mergedPerHour = merged.length / opts.hours;
    const ciMinutesInWindow = [...this.ci.runs.values()]
      .filter((r) => r.startedAt >= this.windowStart && r.startedAt < this.windowEnd)
      .reduce((sum, r) => sum + ((r.endedAt ?? this.windowEnd) - r.startedAt) / MINUTE, 0);
    const cancelled = [...this.ci.runs.values()].filter(
      (r) => r.startedAt >= this.windowStart && r.endedAt !== null && r.endedAt < r.finishAt,
    ).length;
    return {
      scenario: cfg.scenario.id,
      label: cfg.scenario.label,
      arrival: cfg.arrivalPerHour === 0 ? 'saturated' : 'poisson',
      flakeRate: cfg.flakeRate,
      warmupHours: opts.warmupHours,
      replications: 1,
      mergedPerHourRange: [mergedPerHour, mergedPerHour],
      arrivalPerHour: cfg.arrivalPerHour,
      mergedPerHour,
      processedPerHour: (merged.length + failed.length) / opts.hours,
      ceiling,
      ratio: mergedPerHour / ceiling.perHour,
      merged: merged.length,
      ejectedBad: failed.filter((p) => p.bad).length,
      ejectedGood: failed.filter((p) => !p.bad).length,
      badMerged: this.badMerged,
      untestedMerges: this.untestedMerges,
      runsStarted: this.runsInWindow,
      runsCancelled: cancelled,
      runsPerMerged: merged.length > 0 ? this.runsInWindow / merged.length : 0,
      ciHoursPerMerged: merged.length > 0 ? ciMinutesInWindow / 60 / merged.length : 0,
      meanQueueMinutes: waits.length > 0 ? waits.reduce((a, b) => a + b, 0) / waits.length : 0,
      p95QueueMinutes: percentile(waits, 0.95),
      openAtEnd: this.open,
      stall,
      events: this.events,
      stepMicros: this.events > 0 ? Number(this.stepNanos / BigInt(this.events)) / 1000 : 0,
      statePrs: this.state.prs.size,
      stateRuns: Object.keys(this.state.runs).length,
      stateKiB: Math.round(JSON.stringify(this.state).length / 1024),
    };
  }
}

function hours(at: number): string {
  return `t+${((at - T0) / HOUR).toFixed(2)} h`;
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

// ---------------------------------------------------------------------------------------------------
// Engine cost with many PRs queued.

export interface CostSetup {
  name: string;
  settings: Partial<QueueSettings>;
  targets: number;
  /**
   * PR numbers as a busy forge hands them out (40,007, 40,014, …) instead of 1..n: V8 keeps an object
   * with sparse integer keys as a dictionary, so copying and walking the state's PR map costs ~100×
   * more than for dense numbers (issue 26: a shape the dense bench did not show).
   */
  sparse?: boolean;
}

/**
 * The number a busy forge gives the n-th PR of a run of submissions (its issues and other PRs take the
 * numbers between): 40,007, 40,014, … The queue benches use it so that the state's PR map has the
 * keys it has in use, not 1..n (lib/int-map.ts says why that matters).
 */
export const forgePrNumber = (n: number): number => 40_000 + 7 * n;

/** The PR number of the n-th PR submitted in a setup. */
const prNumberOf = (setup: CostSetup, n: number): number => (setup.sparse ? forgePrNumber(n) : n);

const SINGLE_25: Partial<QueueSettings> = { mode: 'single', concurrency: 25, directMergeMode: 'off' };
const BATCHING_4_25: Partial<QueueSettings> = {
  ...SINGLE_25,
  batch: true,
  batchingMinSize: 4,
  optimizationMode: 'bisection_skip_redundant_tests',
};

export const COST_SETUPS: CostSetup[] = [
  { name: 'single, concurrency 25', settings: SINGLE_25, targets: 0 },
  { name: 'batching 4, concurrency 25', settings: BATCHING_4_25, targets: 0 },
  {
    name: 'parallel, 4 targets, concurrency 25',
    settings: { mode: 'parallel', concurrency: 25, directMergeMode: 'off' },
    targets: 4,
  },
  { name: 'single, concurrency 25, PR numbers 40,007 + 7n', settings: SINGLE_25, targets: 0, sparse: true },
  {
    name: 'batching 4, concurrency 25, PR numbers 40,007 + 7n',
    settings: BATCHING_4_25,
    targets: 0,
    sparse: true,
  },
];

/** Apply an event and the forge's immediate answers (branches built, merges landed). */
function drive(state: QueueState, event: QueueEvent, now: number): QueueState {
  const inbox: QueueEvent[] = [event];
  let merges = 0;
  let s = state;
  for (let ev = inbox.shift(); ev; ev = inbox.shift()) {
    const out = step(s, ev, now);
    s = out.state;
    for (const a of out.actions) {
      if (a.type === 'create_test_run')
        inbox.push({ type: 'test_branch_built', runId: a.runId, sha: `sha-${a.runId}` });
      if (a.type === 'merge_pr') {
        merges += 1;
        inbox.push({
          type: 'merge_succeeded',
          prNumber: a.prNumber,
          newTargetSha: `m-${a.prNumber}-${merges}`,
        });
      }
    }
  }
  return s;
}

function submitEvent(n: number): QueueEvent {
  return {
    type: 'pr_submitted',
    pr: {
      number: n,
      title: `PR ${n}`,
      author: 'dev',
      headSha: `pr${n}-head`,
      baseSha: 'old-main',
      baseBranch: 'main',
      mergeability: 'mergeable',
    },
    checks: [{ name: REQUIRED_CHECK, outcome: 'passed' }],
  };
}

function buildQueued(setup: CostSetup, count: number, now: number): QueueState {
  let s = createQueueState({
    branch: 'main',
    targetHead: 'main-0',
    idSeed: 'run',
    concurrency: 25,
    settings: setup.settings,
  });
  s = drive(s, { type: 'required_statuses_discovered', branchProtection: [REQUIRED_CHECK] }, now);
  for (let n = 1; n <= count; n += 1) {
    const number = prNumberOf(setup, n);
    s = drive(s, submitEvent(number), now);
    if (setup.targets > 0) {
      const targets = [`t${n % setup.targets}`];
      s = drive(
        s,
        { type: 'impacted_targets_set', prNumber: number, headSha: `pr${number}-head`, targets },
        now,
      );
    }
  }
  return s;
}

function timeStep(
  setup: string,
  label: string,
  state: QueueState,
  event: QueueEvent,
  now: number,
  iterations: number,
): CostResult {
  const warm = Math.max(3, Math.floor(iterations / 10));
  let actions = 0;
  for (let i = 0; i < warm; i += 1) actions = step(state, event, now).actions.length;
  // With --expose-gc, each case starts on a collected heap: the garbage of building the states and of
  // the cases before it is not collected during this one (its own garbage still is).
  (globalThis as { gc?: () => void }).gc?.();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    const t0 = process.hrtime.bigint();
    step(state, event, now);
    samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  samples.sort((a, b) => a - b);
  return {
    setup,
    event: label,
    iterations,
    medianMicros: percentile(samples, 0.5),
    p99Micros: percentile(samples, 0.99),
    meanMicros: samples.reduce((a, b) => a + b, 0) / samples.length,
    actions,
  };
}

function headRun(s: QueueState): string {
  const first = s.order[0];
  const id = first === undefined ? null : s.prs.get(first)?.runId;
  if (!id) throw new Error('cost bench: the head PR is not testing');
  return id;
}

/** The timed cases of one setup: [event label, state it is applied to, event]. */
export function costCases(setup: CostSetup, count: number, now: number): [string, QueueState, QueueEvent][] {
  const s = buildQueued(setup, count, T0);
  const run = headRun(s);
  const pass: QueueEvent = {
    type: 'ci_reported',
    runId: run,
    checks: [{ name: REQUIRED_CHECK, outcome: 'passed' }],
  };
  const fail: QueueEvent = {
    type: 'ci_reported',
    runId: run,
    checks: [{ name: REQUIRED_CHECK, outcome: 'failed' }],
  };
  const head = s.order[0]!;
  // A state where the head passed and its merge is in flight.
  const merging = step(s, pass, now).state;
  const cases: [string, QueueState, QueueEvent][] = [
    ['tick', s, { type: 'tick' }],
    ['pr_submitted', s, submitEvent(prNumberOf(setup, count + 1))],
    ['ci_reported (head passes)', s, pass],
    ['ci_reported (head fails)', s, fail],
    ['merge_succeeded (head)', merging, { type: 'merge_succeeded', prNumber: head, newTargetSha: 'main-1' }],
  ];
  if (setup.targets > 0) {
    const next = prNumberOf(setup, count + 1);
    const submitted = drive(s, submitEvent(next), now);
    cases.push([
      'impacted_targets_set',
      submitted,
      {
        type: 'impacted_targets_set',
        prNumber: next,
        headSha: `pr${next}-head`,
        targets: ['t1'],
      },
    ]);
  }
  return cases;
}

export function measureEngineCost(count: number, iterations: number, log: (l: string) => void): CostResult[] {
  const results: CostResult[] = [];
  const now = T0 + HOUR;
  for (const setup of COST_SETUPS) {
    const built = performance.now();
    const cases = costCases(setup, count, now);
    const s = (cases[0] as [string, QueueState, QueueEvent])[1];
    const testing = s.prs.values().filter((e) => e.state === 'testing').length;
    log(
      `  cost: ${setup.name}: ${count} PRs queued (${testing} testing) in ${Math.round(performance.now() - built)} ms`,
    );
    const name = `${setup.name} (${count} queued, ${testing} testing)`;
    for (const [label, state, event] of cases)
      results.push(timeStep(name, label, state, event, now, iterations));
    results.push(timePersistence(name, s, iterations));
  }
  return results;
}

/**
 * The runner's per-event work on the stored state besides SQL (src/app/queue/apply.ts): parse the row
 * it read, serialise the row it writes. The whole state, whatever the event touched.
 */
function timePersistence(setup: string, state: QueueState, iterations: number): CostResult {
  const json = JSON.stringify(state);
  for (let i = 0; i < 3; i += 1) JSON.stringify(JSON.parse(json));
  const samples: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    const t0 = process.hrtime.bigint();
    JSON.stringify(JSON.parse(json));
    samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  samples.sort((a, b) => a - b);
  return {
    setup,
    event: `runner: parse + serialise the state (${Math.round(json.length / 1024)} KiB JSON)`,
    iterations,
    medianMicros: percentile(samples, 0.5),
    p99Micros: percentile(samples, 0.99),
    meanMicros: samples.reduce((a, b) => a + b, 0) / samples.length,
    actions: 0,
    persistence: true,
  };
}

// ---------------------------------------------------------------------------------------------------

export async function runQueueBench(options: QueueBenchOptions = {}): Promise<QueueBenchReport> {
  const opts = resolve(options);
  const started = performance.now();
  const throughput: ScenarioResult[] = [];
  for (const scenario of opts.scenarios) {
    for (const flakeRate of opts.flakeRates) {
      const t = performance.now();
      const cfg = { scenario, flakeRate, backlog: backlogFor(scenario), arrivalPerHour: 0 };
      const reps: ScenarioResult[] = [];
      const warmupHours = scenario.warmupHours ?? opts.warmupHours;
      const more = () =>
        reps.length < (scenario.minReplications ?? 1) ||
        (reps.length < opts.maxReplications &&
          reps.reduce((n, x) => n + x.merged, 0) < opts.minMerged &&
          reps.reduce((n, x) => n + x.events, 0) < opts.maxEvents);
      while (more()) {
        reps.push(new QueueSim({ ...opts, warmupHours, seed: opts.seed + reps.length }, cfg).run());
      }
      const r = combine(reps, opts.hours);
      throughput.push(r);
      opts.log(
        `  queue ${scenario.id} f=${pct(flakeRate)}: ${r.mergedPerHour.toFixed(2)} merged/h (ceiling ${r.ceiling.perHour.toFixed(2)}), ${r.events} events, ${Math.round(performance.now() - t)} ms`,
      );
      await yieldToLoop();
    }
  }
  const latency: ScenarioResult[] = [];
  if (opts.latencyFlakeRate !== null) {
    for (const scenario of opts.scenarios) {
      const saturated = throughput.find(
        (r) => r.scenario === scenario.id && r.flakeRate === opts.latencyFlakeRate,
      );
      const rate = saturated ? saturated.processedPerHour * opts.arrivalLoad : 0;
      if (rate <= 0) continue;
      const t = performance.now();
      const arrivalPerHour = Math.round(rate * 10) / 10;
      const cfg = { scenario, flakeRate: opts.latencyFlakeRate, backlog: 0, arrivalPerHour };
      const r = new QueueSim({ ...opts, warmupHours: scenario.warmupHours ?? opts.warmupHours }, cfg).run();
      latency.push(r);
      opts.log(
        `  queue ${scenario.id} λ=${arrivalPerHour}/h: mean ${r.meanQueueMinutes.toFixed(0)} min in queue, ${Math.round(performance.now() - t)} ms`,
      );
      await yieldToLoop();
    }
  }
  const cost = measureEngineCost(opts.costPrs, opts.costIterations, opts.log);
  const { log: _log, scenarios: _scenarios, ...params } = opts;
  return { params, throughput, latency, cost, seconds: (performance.now() - started) / 1000 };
}

/** Totals over replications; rates and means weighted by window length (or by merged PRs). */
export function combine(reps: ScenarioResult[], hours: number): ScenarioResult {
  const [first] = reps;
  if (!first || reps.length === 1) return first!;
  const sum = (f: (r: ScenarioResult) => number) => reps.reduce((a, r) => a + f(r), 0);
  const total = hours * reps.length;
  const merged = sum((r) => r.merged);
  const runsStarted = sum((r) => r.runsStarted);
  const perHour = reps.map((r) => r.mergedPerHour);
  const mergedPerHour = merged / total;
  const events = sum((r) => r.events);
  const stall = reps.map((r) => r.stall).find((x) => x !== null) ?? null;
  return {
    ...first,
    replications: reps.length,
    mergedPerHourRange: [Math.min(...perHour), Math.max(...perHour)],
    mergedPerHour,
    processedPerHour: sum((r) => r.processedPerHour * hours) / total,
    ratio: mergedPerHour / first.ceiling.perHour,
    merged,
    ejectedBad: sum((r) => r.ejectedBad),
    ejectedGood: sum((r) => r.ejectedGood),
    badMerged: sum((r) => r.badMerged),
    untestedMerges: sum((r) => r.untestedMerges),
    runsStarted,
    runsCancelled: sum((r) => r.runsCancelled),
    runsPerMerged: merged > 0 ? runsStarted / merged : 0,
    ciHoursPerMerged: merged > 0 ? sum((r) => r.ciHoursPerMerged * r.merged) / merged : 0,
    meanQueueMinutes: merged > 0 ? sum((r) => r.meanQueueMinutes * r.merged) / merged : 0,
    p95QueueMinutes: Math.max(...reps.map((r) => r.p95QueueMinutes)),
    openAtEnd: sum((r) => r.openAtEnd),
    stall,
    events,
    stepMicros: events > 0 ? sum((r) => r.stepMicros * r.events) / events : 0,
    statePrs: Math.max(...reps.map((r) => r.statePrs)),
    stateRuns: Math.max(...reps.map((r) => r.stateRuns)),
    stateKiB: Math.max(...reps.map((r) => r.stateKiB)),
  };
}

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

// ---------------------------------------------------------------------------------------------------
// Markdown.

function pct(x: number): string {
  return `${Math.round(x * 1000) / 10}%`;
}

function num(x: number, digits = 2): string {
  return x.toFixed(digits);
}

export function formatQueueReport(report: QueueBenchReport): string {
  const p = report.params;
  const lines: string[] = [];
  lines.push(
    `Merge queue, simulated: T = ${p.durationMinutes} min ± ${pct(p.jitter)}, real-failure rate p = ${pct(p.failureRate)}, ` +
      `${p.hours} h measured after ${p.warmupHours} h warm-up, seed ${p.seed}; queue kept saturated. ` +
      'Ceilings: mergequeue.md §1c with q = p + f.',
    '',
    '| configuration | f | merged/h (range, seeds) | ceiling/h | formula | ratio | processed/h | good PRs ejected | runs/merged | CI h/merged | safety |',
    '|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|',
  );
  for (const r of report.throughput) {
    lines.push(
      `| ${r.label}${warmup(r, p.warmupHours)} | ${pct(r.flakeRate)} | ${num(r.mergedPerHour)}${range(r)} | ${num(r.ceiling.perHour)} | ${r.ceiling.name}: ${r.ceiling.formula} | ` +
        `${num(r.ratio)} | ${num(r.processedPerHour)} | ${r.ejectedGood} of ${r.merged + r.ejectedGood} | ${num(r.runsPerMerged)} | ` +
        `${num(r.ciHoursPerMerged)} | ${safety(r)} |`,
    );
  }
  if (report.latency.length > 0) {
    lines.push(
      '',
      `Time in queue (submission → merge) with Poisson arrivals at ${pct(p.arrivalLoad)} of each configuration's saturated rate, f = ${pct(p.latencyFlakeRate ?? 0)}:`,
      '',
      '| configuration | arrivals/h | merged/h | mean min | p95 min | good PRs ejected | runs/merged | queued at end |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of report.latency) {
      lines.push(
        `| ${r.label} | ${num(r.arrivalPerHour, 1)} | ${num(r.mergedPerHour)} | ${num(r.meanQueueMinutes, 0)} | ${num(r.p95QueueMinutes, 0)} | ` +
          `${r.ejectedGood} | ${num(r.runsPerMerged)} | ${r.openAtEnd} |`,
      );
    }
  }
  lines.push(
    '',
    'Events fed to the engine and mean step() cost during the saturated runs; state size at the end (largest replication), with finished runs and PRs pruned by the simulator (see pruneRuns):',
    '',
    '| configuration | f | events | µs/event (mean) | PRs in state | runs in state | state JSON KiB |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of report.throughput) {
    lines.push(
      `| ${r.label} | ${pct(r.flakeRate)} | ${r.events} | ${num(r.stepMicros, 0)} | ${r.statePrs} | ${r.stateRuns} | ${r.stateKiB} |`,
    );
  }
  lines.push(
    '',
    `Engine cost per event: step() on a state with ${p.costPrs} PRs queued, ${p.costIterations} timed calls each:`,
    '',
    '| state | event | median µs | p99 µs | mean µs | actions |',
    '|---|---|---:|---:|---:|---:|',
  );
  for (const c of report.cost) {
    lines.push(
      `| ${c.setup} | ${c.event} | ${num(c.medianMicros, 0)} | ${num(c.p99Micros, 0)} | ${num(c.meanMicros, 0)} | ${c.actions} |`,
    );
  }
  return lines.join('\n');
}

/** A row measured after another warm-up than the bench's says so. */
export function warmup(r: ScenarioResult, benchWarmup: number): string {
  return r.warmupHours === benchWarmup ? '' : ` (after ${r.warmupHours} h warm-up)`;
}

/** The merged/hour range over replications, for the tables. */
export function range(r: ScenarioResult): string {
  if (r.replications === 1) return '';
  const [lo, hi] = r.mergedPerHourRange;
  return ` (${num(lo)}–${num(hi)}, ${r.replications})`;
}

/** The safety column: bad merges, untested merges, stalls, or ok. */
export function safety(r: ScenarioResult): string {
  const problems: string[] = [];
  if (r.badMerged > 0) problems.push(`${r.badMerged} bad merged`);
  if (r.untestedMerges > 0) problems.push(`${r.untestedMerges} untested merges`);
  if (r.stall) problems.push(`stall: ${r.stall}`);
  return problems.length > 0 ? problems.join('; ') : 'ok';
}
