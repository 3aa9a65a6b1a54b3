/**
 * Simulated CI and forge for the merge-queue bench: a seeded PRNG, a timed event heap and a CI whose
 * runs take T (± jitter) and fail when their test branch holds a bad PR, or by flake with probability f;
 * optionally it also names the tests that failed (a suite model, for the flake-protection bench).
 * Everything runs on simulated time; nothing here reads the wall clock.
 */

/** mulberry32: a tiny deterministic PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Exponentially distributed sample with the given mean (Poisson inter-arrival times). */
export function exponential(rand: () => number, mean: number): number {
  return -Math.log(1 - rand()) * mean;
}

/** A binary min-heap of timed items; ties are broken by insertion order so runs are reproducible. */
export class TimedHeap<T> {
  private readonly items: { at: number; seq: number; value: T }[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  push(at: number, value: T): void {
    const items = this.items;
    items.push({ at, seq: this.seq++, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  peekAt(): number | undefined {
    return this.items[0]?.at;
  }

  pop(): { at: number; value: T } | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined) return undefined;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return { at: top.at, value: top.value };
  }

  private less(i: number, j: number): boolean {
    const a = this.items[i]!;
    const b = this.items[j]!;
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const t = this.items[i]!;
    this.items[i] = this.items[j]!;
    this.items[j] = t;
  }
}

export interface CiParams {
  /** Mean CI duration T of one run, minutes. */
  durationMinutes: number;
  /** Each run lasts T·(1 ± jitter), uniformly. */
  jitter: number;
  /** Probability f that a run holding only good PRs fails anyway. */
  flakeRate: number;
  /** Optional test-suite model: which tests fail in a failed run (off: only pass/fail is decided). */
  suite?: SuiteParams;
}

/**
 * A test suite as the health data knows it. A bad PR makes one healthy test fail; a flake makes one
 * known-flaky test fail (the first round(quarantinedShare·flakyTests) of them are quarantined, the rest are
 * FLAKY and not quarantined), or, with probability unknownFlakeShare, a test the health data still
 * takes for healthy.
 */
export interface SuiteParams {
  healthyTests: number;
  flakyTests: number;
  quarantinedShare: number;
  unknownFlakeShare: number;
}

/** One test that failed in a run, with its health at the moment of judging. */
export interface FailedTest {
  name: string;
  quarantined: boolean;
  status: 'HEALTHY' | 'FLAKY';
}

export interface CiRun {
  runId: string;
  startedAt: number;
  finishAt: number;
  passes: boolean;
  /** Why it fails: a bad PR in the branch, or a flake. */
  cause: 'bad_pr' | 'flake' | null;
  endedAt: number | null;
  /** With a suite model: the tests that failed (empty when the run passes). */
  failedTests?: FailedTest[];
}

/**
 * The CI: decides each run's outcome when it starts (so the outcome does not depend on event order),
 * and accounts the CI time spent, including runs cancelled part-way.
 */
export class SimulatedCi {
  readonly runs = new Map<string, CiRun>();
  started = 0;
  cancelled = 0;
  flaked = 0;
  /** CI minutes consumed by finished and cancelled runs. */
  minutes = 0;

  constructor(
    private readonly params: CiParams,
    private readonly rand: () => number,
    private readonly isBad: (prNumber: number) => boolean,
    /** Picks the failing tests when params.suite is set; separate so the pass/fail dice stay the same. */
    private readonly suiteRand: () => number = () => 0,
  ) {}

  start(runId: string, prsInBranch: readonly number[], now: number): CiRun {
    const { durationMinutes, jitter, flakeRate } = this.params;
    const minutes = durationMinutes * (1 + jitter * (2 * this.rand() - 1));
    const flake = this.rand() < flakeRate;
    const culprit = prsInBranch.find((n) => this.isBad(n));
    const broken = culprit !== undefined;
    const run: CiRun = {
      runId,
      startedAt: now,
      finishAt: now + Math.round(minutes * 60_000),
      passes: !broken && !flake,
      cause: broken ? 'bad_pr' : flake ? 'flake' : null,
      endedAt: null,
    };
    if (this.params.suite) run.failedTests = this.failingTests(this.params.suite, culprit, flake);
    this.runs.set(runId, run);
    this.started += 1;
    if (!broken && flake) this.flaked += 1;
    return run;
  }

  private failingTests(suite: SuiteParams, culprit: number | undefined, flake: boolean): FailedTest[] {
    const failed: FailedTest[] = [];
    if (culprit !== undefined) {
      failed.push({ name: `healthy-${culprit % suite.healthyTests}`, quarantined: false, status: 'HEALTHY' });
    }
    if (flake) {
      if (this.suiteRand() < suite.unknownFlakeShare) {
        const k = Math.floor(this.suiteRand() * suite.healthyTests);
        failed.push({ name: `unknown-flaky-${k}`, quarantined: false, status: 'HEALTHY' });
      } else {
        const k = Math.floor(this.suiteRand() * suite.flakyTests);
        const quarantined = k < Math.round(suite.quarantinedShare * suite.flakyTests);
        failed.push({ name: `flaky-${k}`, quarantined, status: 'FLAKY' });
      }
    }
    return failed;
  }

  /** The run reached its end; returns it unless it was cancelled before. */
  finish(runId: string): CiRun | undefined {
    const run = this.runs.get(runId);
    if (!run || run.endedAt !== null) return undefined;
    run.endedAt = run.finishAt;
    this.minutes += (run.finishAt - run.startedAt) / 60_000;
    return run;
  }

  /** The queue gave up on the run (superseded or no longer needed): stop spending CI on it. */
  cancel(runId: string, now: number): void {
    const run = this.runs.get(runId);
    if (!run || run.endedAt !== null) return;
    run.endedAt = now;
    this.cancelled += 1;
    this.minutes += (now - run.startedAt) / 60_000;
  }
}
