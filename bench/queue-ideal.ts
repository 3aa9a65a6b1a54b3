/**
 * Throughput ceilings of the merge-queue configurations in bench/queue-main.ts, and an idealised
 * simulator to check them against (issue 26).
 *
 * The idealised queue follows the policy src/domain/queue claims, with zero overhead: test branches are
 * built, merges land and decisions are taken at the instant a run reports. Its random model is the one of
 * bench/queue-ci.ts: a PR is bad with probability p, a run lasts T·(1 ± jitter) (uniform) and fails if its
 * branch holds a bad PR, otherwise by flake with probability f.
 *
 * The policy, as the engine states it:
 * - up to C main runs at once; each tests one PR (or a batch of B consecutive PRs) on top of every
 *   unmerged PR ahead of it in its lane (the whole queue in single mode, the PRs of the same target in
 *   parallel mode); the first C runnable PRs in queue order get the slots;
 * - a passing run proves its PRs; they merge once everything ahead in the lane merged; with optimistic
 *   merge a passing run also proves every unmerged PR ahead of it that it contains;
 * - a failing run waits until everything ahead in its lane settled and, with pending-failure depth d, until
 *   the next d groups behind it finished; then a single PR is ejected and a batch is bisected;
 * - an ejected PR invalidates every run whose branch holds it: those PRs go back to pending and restart;
 * - bisection (bisection_skip_redundant_tests): a failed segment is halved, the left half runs first
 *   and the right half is inferred to fail when the left passes; runs use a separate pool of
 *   bisectionConcurrency; at the end the single failing PRs are ejected, the passing segment that starts
 *   at the batch's first PR merges, the other PRs of the batch go back to pending at the queue's head.
 *
 * Pure and deterministic: seeded PRNGs, simulated time, nothing reads the clock.
 */
import { mulberry32, TimedHeap } from './queue-ci.ts';

const HOUR = 60 * 60_000;

export interface IdealPolicy {
  /** Main runs at once (C). */
  concurrency: number;
  /** Batching with this batch size B (undefined or 1: one PR per run). */
  batchSize?: number;
  /** Separate pool for bisection runs (default 2·C, at least 2, as the bench configures the engine). */
  bisectionConcurrency?: number;
  /** Optimistic merge. */
  optimistic?: boolean;
  /** Pending-failure depth d (0 or 1 have a ceiling here). */
  pendingFailureDepth?: number;
  /** Parallel mode: each PR impacts one of this many independent targets, uniformly (k lanes). */
  lanes?: number;
}

export interface IdealModel {
  /** Mean CI duration T, minutes. */
  durationMinutes: number;
  /** Runs last T·(1 ± jitter), uniformly. */
  jitter: number;
  /** p: probability that a PR breaks the build. */
  failureRate: number;
  /** f: probability that a run without a bad PR fails anyway. */
  flakeRate: number;
}

export interface IdealRunOptions {
  seed: number;
  /** Measured simulated hours, after warmupHours. */
  hours: number;
  warmupHours?: number;
}

export interface IdealResult {
  merged: number;
  mergedPerHour: number;
  ejectedBad: number;
  ejectedGood: number;
  runs: number;
}

export interface Ceiling {
  name: string;
  formula: string;
  perHour: number;
}

// ---------------------------------------------------------------------------------------------------
// Ceilings. q₁ = 1 − (1 − p)(1 − f): the chance that a run fails given that every PR ahead of it is good.
// All of them assume a fixed T (jitter 0) and a saturated queue; see docs/benchmarks-queue.md.

function q1Of(m: IdealModel): number {
  return 1 - (1 - m.failureRate) * (1 - m.flakeRate);
}

/** Expected merges of a speculative window of n runs: Σ_{i=1..n} (1−q₁)^i. */
export function windowMerges(q1: number, n: number): number {
  return q1 === 0 ? n : ((1 - q1) * (1 - (1 - q1) ** n)) / q1;
}

export function idealCeiling(policy: IdealPolicy, model: IdealModel): Ceiling {
  const t = model.durationMinutes / 60;
  const q1 = q1Of(model);
  const c = policy.concurrency;
  const b = policy.batchSize ?? 1;
  const k = policy.lanes ?? 1;
  const depth = policy.optimistic ? (policy.pendingFailureDepth ?? 0) : 0;
  if (k > 1 && b === 1 && depth === 0) {
    return {
      name: 'speculative lanes sharing C slots',
      formula: 'Markov chain over leftover PRs per lane',
      perHour: parallelLanes(c, k, model) / t,
    };
  }
  if (b > 1 && k === 1 && depth === 0) {
    const r = batchRenewal(b, c, policy.bisectionConcurrency ?? Math.max(2, 2 * c), model);
    return {
      name: `speculative batches with bisection (${r.rounds.toFixed(2)} rounds per bisection)`,
      formula: 'Markov renewal: E[merged per cycle]/E[cycle]',
      perHour: r.mergedPerCycle / (r.cyclesT * t),
    };
  }
  if (b === 1 && k === 1 && depth === 1) {
    return {
      name: 'anti-flake window (depth 1)',
      formula: 'Markov renewal: E[merged per window]/T',
      perHour: antiFlakeWindow(c, model) / t,
    };
  }
  if (b === 1 && k === 1 && depth === 0) {
    return c === 1
      ? { name: 'serial', formula: '(1−p)(1−f)/T', perHour: (1 - q1) / t }
      : {
          name: 'speculative window C',
          formula: '(1−q₁)(1−(1−q₁)^C)/(q₁·T)',
          perHour: windowMerges(q1, c) / t,
        };
  }
  throw new Error(`no ceiling derived for ${JSON.stringify(policy)}`);
}

/** Stationary distribution of a small Markov chain (rows sum to 1), by power iteration. */
function stationary(P: number[][]): number[] {
  const n = P.length;
  let pi = new Array<number>(n).fill(1 / n);
  for (let it = 0; it < 100_000; it += 1) {
    const next = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i += 1) for (let j = 0; j < n; j += 1) next[j]! += pi[i]! * P[i]![j]!;
    const diff = next.reduce((d, x, i) => d + Math.abs(x - pi[i]!), 0);
    pi = next;
    if (diff < 1e-15) break;
  }
  return pi;
}

/**
 * Optimistic merge + pending-failure depth 1, window of C runs started together (fixed T, so every
 * window starts and ends together). Scanning the runs in queue order, a failed run waits for the next
 * one: if it passes, both merge; if it fails, the waiting PR is ejected and everything behind restarts
 * (end of the window). A failure in the last run is carried into the next window. When a waiting good
 * PR is ejected because the run behind it failed, the PR of that run is suspect: it is bad with
 * probability p/q₁, not p. Window start states: fresh, carried good PR (it flaked), carried bad PR,
 * suspect PR first. Returns expected merges per window (each lasts T).
 */
export function antiFlakeWindow(c: number, m: IdealModel): number {
  const p = m.failureRate;
  const f = m.flakeRate;
  const q1 = q1Of(m);
  const rho = q1 === 0 ? 0 : p / q1;
  const rows: number[][] = [];
  const merges: number[] = [];
  // Scan states: clean, waiting on a good PR, waiting on a bad PR, ended (next window fresh), ended
  // with a suspect PR at the head.
  for (const start of [0, 1, 2, 3]) {
    let dist = [start === 0 || start === 3 ? 1 : 0, start === 1 ? 1 : 0, start === 2 ? 1 : 0, 0, 0];
    let merged = 0;
    for (let i = 0; i < c; i += 1) {
      const pb = i === 0 && start === 3 ? rho : p;
      const a = (1 - pb) * (1 - f);
      const [clean = 0, good = 0, bad = 0, ended = 0, suspect = 0] = dist;
      merged += clean * a + 2 * good * a;
      dist = [clean * a + good * a, clean * (1 - pb) * f, clean * pb, ended + bad, suspect + good * (1 - a)];
    }
    const [clean = 0, good = 0, bad = 0, ended = 0, suspect = 0] = dist;
    rows.push([clean + ended, good, bad, suspect]);
    merges.push(merged);
  }
  const pi = stationary(rows);
  return pi.reduce((s, x, i) => s + x * merges[i]!, 0);
}

/**
 * Parallel mode, k independent lanes sharing C slots, fixed T: every window the first C PRs in queue
 * order run; in each lane the leading passes merge and a failure at lane position j ejects that PR and
 * restarts the lane's PRs behind it, which stay at the head of the queue (older than any new PR). Markov
 * chain over those leftover counts per lane (sorted: lanes are exchangeable); new PRs pick a lane
 * uniformly. Returns expected merges per window (each lasts T).
 */
export function parallelLanes(c: number, k: number, m: IdealModel): number {
  const q1 = q1Of(m);
  const s = 1 - q1;
  const binom: number[][] = [[1]];
  for (let n = 1; n <= c; n += 1) {
    binom.push(
      Array.from({ length: n + 1 }, (_, i) =>
        i === 0 || i === n ? 1 : binom[n - 1]![i - 1]! + binom[n - 1]![i]!,
      ),
    );
  }
  // Leftover distribution of a lane with n runs: failure at position j leaves n − j behind.
  const leftover = (n: number): number[] => {
    if (n === 0) return [1];
    const d = new Array<number>(n).fill(0);
    for (let j = 1; j <= n; j += 1) d[n - j]! += s ** (j - 1) * q1;
    d[0]! += s ** n;
    return d;
  };
  const base = c + 1;
  const leftovers = Array.from({ length: c + 1 }, (_, n) => leftover(n));
  const mergesOf = Array.from({ length: c + 1 }, (_, n) => windowMerges(q1, n));
  const binomial = (n: number, share: number) =>
    Array.from({ length: n + 1 }, (_, i) => binom[n]![i]! * share ** i * (1 - share) ** (n - i));
  // A state is the leftover counts sorted in decreasing order, encoded in base C + 1.
  const encode = (v: readonly number[]) => [...v].sort((x, y) => y - x).reduce((a, x) => a * base + x, 0);
  const index = new Map<number, number>();
  const states: number[][] = [];
  const stateOf = (v: readonly number[]): number => {
    const code = encode(v);
    let i = index.get(code);
    if (i === undefined) {
      i = states.length;
      index.set(code, i);
      states.push([...v].sort((x, y) => y - x));
    }
    return i;
  };
  stateOf(new Array<number>(k).fill(0));
  const rows: Map<number, number>[] = [];
  const merges: number[] = [];
  type Partial = { r: number; left: number[]; prob: number; mw: number };
  for (let si = 0; si < states.length; si += 1) {
    const cv = states[si]!;
    const fresh = c - cv.reduce((a, x) => a + x, 0);
    // DP over lanes: new PRs still to place, leftovers so far → probability and probability × merges.
    let layer = new Map<number, Partial>([[fresh, { r: fresh, left: [], prob: 1, mw: 0 }]]);
    for (let lane = 0; lane < k; lane += 1) {
      const next = new Map<number, Partial>();
      const last = lane === k - 1;
      for (const e of layer.values()) {
        const split = last ? null : binomial(e.r, 1 / (k - lane));
        for (let fl = last ? e.r : 0; fl <= e.r; fl += 1) {
          const pf = split ? split[fl]! : 1;
          if (pf === 0) continue;
          const n = cv[lane]! + fl;
          const mn = mergesOf[n]!;
          const dist = leftovers[n]!;
          for (let l = 0; l < dist.length; l += 1) {
            const w = pf * dist[l]!;
            if (w === 0) continue;
            const r = e.r - fl;
            const code = e.left.reduce((a, x) => a * base + x, 0) * base * base + l * base + r;
            let cur = next.get(code);
            if (!cur) {
              cur = { r, left: [...e.left, l], prob: 0, mw: 0 };
              next.set(code, cur);
            }
            cur.prob += e.prob * w;
            cur.mw += (e.mw + e.prob * mn) * w;
          }
        }
      }
      layer = next;
    }
    const row = new Map<number, number>();
    let mw = 0;
    for (const e of layer.values()) {
      const j = stateOf(e.left);
      row.set(j, (row.get(j) ?? 0) + e.prob);
      mw += e.mw;
    }
    rows.push(row);
    merges.push(mw);
  }
  // Power iteration on the sparse chain.
  let pi = new Array<number>(states.length).fill(1 / states.length);
  for (let it = 0; it < 10_000; it += 1) {
    const next = new Array<number>(states.length).fill(0);
    rows.forEach((row, i) => {
      for (const [j, pr] of row) next[j]! += pi[i]! * pr;
    });
    const diff = next.reduce((d, x, i) => d + Math.abs(x - pi[i]!), 0);
    pi = next;
    if (diff < 1e-14) break;
  }
  return pi.reduce((a, x, i) => a + x * merges[i]!, 0);
}

export interface BisectionOutcome {
  prob: number;
  /** PRs of the batch that merge: the passing segment that starts at its first PR. */
  merged: number;
  /** Rounds of T the bisection took. */
  rounds: number;
  /** Good PRs of the batch sent back to the queue's head (they are known to be good). */
  retested: number;
  /** Good PRs ejected by the bisection (flakes). */
  wronglyEjected: number;
}

interface Node {
  prs: number[];
  parent: number | null;
  status: 'waiting' | 'blocked' | 'running' | 'passed' | 'failed';
  split: boolean;
}

/**
 * Every outcome of bisecting one failed batch whose PRs are `bad` (true = bad), with the probability of
 * the flakes that lead to it (bisection runs flake independently with probability f). Round by round:
 * failed segments of two or more PRs are split, the right half blocked until the left is known; a
 * blocked half is inferred failed when its left sibling passed and runs when it failed.
 */
export function bisectionOutcomes(bad: boolean[], f: number, concurrency: number): BisectionOutcome[] {
  const out: BisectionOutcome[] = [];
  const explore = (nodes: Node[], rounds: number, prob: number) => {
    // Split failed segments and unblock right halves until nothing changes.
    for (let changed = true; changed; ) {
      changed = false;
      nodes.forEach((node, i) => {
        if (node.status === 'failed' && !node.split && node.prs.length >= 2) {
          node.split = true;
          const mid = Math.ceil(node.prs.length / 2);
          nodes.push(
            { prs: node.prs.slice(0, mid), parent: i, status: 'waiting', split: false },
            { prs: node.prs.slice(mid), parent: i, status: 'blocked', split: false },
          );
          changed = true;
        }
      });
      nodes.forEach((node, i) => {
        const left = nodes[i - 1];
        if (node.status !== 'blocked' || !left || left.parent !== node.parent) return;
        if (left.status === 'passed') node.status = 'failed';
        else if (left.status === 'failed') node.status = 'waiting';
        else return;
        changed = true;
      });
    }
    const settled = (n: Node) =>
      n.status === 'passed' || (n.status === 'failed' && (n.split || n.prs.length < 2));
    if (nodes.every(settled)) {
      const root = nodes[0]!;
      const culprits = new Set(nodes.filter((n) => !n.split && n.status === 'failed').map((n) => n.prs[0]!));
      const proven = nodes
        .filter((n) => n.status === 'passed' && n.prs[0] === root.prs[0])
        .reduce((best, n) => Math.max(best, n.prs.length), 0);
      const good = root.prs.filter((i) => !bad[i]).length;
      const wrong = [...culprits].filter((i) => !bad[i]).length;
      out.push({ prob, merged: proven, rounds, retested: good - proven - wrong, wronglyEjected: wrong });
      return;
    }
    const starting = nodes.filter((n) => n.status === 'waiting').slice(0, concurrency);
    const free = starting.filter((n) => !n.prs.some((i) => bad[i]));
    // Segments with a bad PR fail; each clean one fails by flake or passes: branch over those.
    for (let mask = 0; mask < 2 ** free.length; mask += 1) {
      let pr = prob;
      const next = nodes.map((n) => ({ ...n }));
      for (const n of starting) {
        const j = free.indexOf(n);
        const fails = j < 0 || (mask >> j) & 1;
        if (j >= 0) pr *= fails ? f : 1 - f;
        next[nodes.indexOf(n)]!.status = fails ? 'failed' : 'passed';
      }
      if (pr > 0) explore(next, rounds + 1, pr);
    }
  };
  const root: Node = { prs: bad.map((_, i) => i), parent: null, status: 'failed', split: false };
  explore([root], 0, 1);
  return out;
}

export interface BatchRenewal {
  /** Expected PRs merged per cycle and expected cycle length in units of T. */
  mergedPerCycle: number;
  cyclesT: number;
  /** Mean bisection rounds per failed batch. */
  rounds: number;
}

/**
 * Speculative batches, fixed T: C batches of B start together; after T the first failing batch (if any)
 * is bisected for R rounds of T while everything behind it waits on it (and is invalidated when its
 * culprit leaves); then the batches ahead of it and its proven head have merged and the queue restarts
 * with the batch's other good PRs at its head. A cycle lasts (1 + R)·T (R = 0 when all C batches pass).
 * Markov renewal over g, the known-good PRs at the head when a cycle starts (0 ≤ g < B).
 */
export function batchRenewal(
  b: number,
  c: number,
  bisectionConcurrency: number,
  m: IdealModel,
): BatchRenewal {
  const p = m.failureRate;
  const f = m.flakeRate;
  // Outcomes of a batch with g known-good PRs at its head, joint with its failing: prob sums to P(fail).
  const failing = (g: number): BisectionOutcome[] => {
    const all: BisectionOutcome[] = [];
    for (let mask = 0; mask < 2 ** (b - g); mask += 1) {
      const bad = Array.from({ length: b }, (_, i) => i >= g && ((mask >> (i - g)) & 1) === 1);
      const nBad = bad.filter(Boolean).length;
      const pBad = p ** nBad * (1 - p) ** (b - g - nBad);
      const pFail = nBad > 0 ? 1 : f;
      if (pBad * pFail === 0) continue;
      for (const o of bisectionOutcomes(bad, f, bisectionConcurrency))
        all.push({ ...o, prob: o.prob * pBad * pFail });
    }
    return all;
  };
  const passOf = (fresh: number) => (1 - p) ** fresh * (1 - f);
  const P: number[][] = [];
  const merged: number[] = [];
  const length: number[] = [];
  let roundsNum = 0;
  let roundsDen = 0;
  const roundsW: number[] = [];
  const roundsF: number[] = [];
  for (let g = 0; g < b; g += 1) {
    const row = new Array<number>(b).fill(0);
    let mg = 0;
    let len = 0;
    let rw = 0;
    let rf = 0;
    let ahead = 1; // probability that batches 1..i−1 passed
    for (let i = 0; i < c; i += 1) {
      const head = i === 0 ? g : 0;
      for (const o of failing(head)) {
        const w = ahead * o.prob;
        row[o.retested]! += w;
        mg += w * (i * b + o.merged);
        len += w * (1 + o.rounds);
        rw += w * o.rounds;
        rf += w;
      }
      ahead *= passOf(b - head);
    }
    row[0]! += ahead;
    mg += ahead * c * b;
    len += ahead;
    P.push(row);
    merged.push(mg);
    length.push(len);
    roundsW.push(rw);
    roundsF.push(rf);
  }
  const pi = stationary(P);
  for (let g = 0; g < b; g += 1) {
    roundsNum += pi[g]! * roundsW[g]!;
    roundsDen += pi[g]! * roundsF[g]!;
  }
  return {
    mergedPerCycle: pi.reduce((s, x, g) => s + x * merged[g]!, 0),
    cyclesT: pi.reduce((s, x, g) => s + x * length[g]!, 0),
    rounds: roundsDen > 0 ? roundsNum / roundsDen : 0,
  };
}

// ---------------------------------------------------------------------------------------------------
// The idealised simulator: event-driven, one event per run that ends.

type PrState = 'pending' | 'testing' | 'passed' | 'pfail' | 'bisecting' | 'merged' | 'ejected';

interface IPr {
  n: number;
  bad: boolean;
  lane: number;
  state: PrState;
  /** The run it tests in or waits on (testing, pfail, bisecting), or that proves it (passed). */
  run: IRun | null;
}

interface IRun {
  kind: 'main' | 'bisection';
  tested: IPr[];
  deps: IPr[];
  members: Set<number>;
  fails: boolean;
  active: boolean;
  node: INode | null;
}

interface INode {
  prs: IPr[];
  parent: number | null;
  status: 'waiting' | 'blocked' | 'running' | 'passed' | 'failed';
  run: IRun | null;
  split: boolean;
}

interface IBisection {
  root: IRun;
  nodes: INode[];
}

const UNSETTLED: readonly PrState[] = ['pending', 'testing', 'pfail', 'bisecting'];

export class IdealQueue {
  private now = 0;
  private readonly heap = new TimedHeap<IRun>();
  private order: IPr[] = [];
  private readonly active = new Set<IRun>();
  private bisections: IBisection[] = [];
  private readonly prRand: () => number;
  private readonly ciRand: () => number;
  private nextPr = 1;
  private readonly c: number;
  private readonly b: number;
  private readonly k: number;
  private readonly depth: number;
  private readonly bisectionConcurrency: number;
  private readonly backlog: number;
  private readonly windowStart: number;
  private readonly windowEnd: number;
  readonly result: IdealResult = { merged: 0, mergedPerHour: 0, ejectedBad: 0, ejectedGood: 0, runs: 0 };

  constructor(
    private readonly policy: IdealPolicy,
    private readonly model: IdealModel,
    private readonly opts: IdealRunOptions,
  ) {
    this.c = policy.concurrency;
    this.b = policy.batchSize ?? 1;
    this.k = policy.lanes ?? 1;
    this.depth = policy.optimistic ? (policy.pendingFailureDepth ?? 0) : 0;
    this.bisectionConcurrency = policy.bisectionConcurrency ?? Math.max(2, 2 * this.c);
    this.backlog = 2 * this.c * this.b + 4 * this.k + 4;
    this.prRand = mulberry32(opts.seed);
    this.ciRand = mulberry32((opts.seed * 31 + 7) >>> 0);
    this.windowStart = (opts.warmupHours ?? 1) * HOUR;
    this.windowEnd = this.windowStart + opts.hours * HOUR;
  }

  run(): IdealResult {
    this.refill();
    this.reconcile();
    for (;;) {
      const next = this.heap.pop();
      if (next === undefined) throw new Error('ideal queue: nothing in flight');
      if (next.at >= this.windowEnd) break;
      if (!next.value.active) continue;
      this.now = next.at;
      this.finish(next.value);
      this.refill();
      this.reconcile();
    }
    this.result.mergedPerHour = this.result.merged / this.opts.hours;
    return this.result;
  }

  private inWindow(): boolean {
    return this.now >= this.windowStart && this.now < this.windowEnd;
  }

  private refill(): void {
    while (this.order.length < this.backlog) {
      const bad = this.prRand() < this.model.failureRate;
      const lane = Math.floor(this.prRand() * this.k);
      this.order.push({ n: this.nextPr++, bad, lane, state: 'pending', run: null });
    }
  }

  private reconcile(): void {
    for (let changed = true; changed; ) {
      changed = this.resolveFailures();
      changed = this.advanceBisections() || changed;
      changed = this.mergeHeads() || changed;
      changed = this.startRuns() || changed;
    }
  }

  private createRun(kind: IRun['kind'], tested: IPr[], deps: IPr[], node: INode | null): IRun {
    const { durationMinutes, jitter, flakeRate } = this.model;
    const minutes = durationMinutes * (1 + jitter * (2 * this.ciRand() - 1));
    const flake = this.ciRand() < flakeRate;
    const all = [...deps, ...tested];
    const run: IRun = {
      kind,
      tested,
      deps,
      members: new Set(all.map((e) => e.n)),
      fails: flake || all.some((e) => e.bad),
      active: true,
      node,
    };
    this.active.add(run);
    this.heap.push(this.now + Math.round(minutes * 60_000), run);
    if (this.inWindow()) this.result.runs += 1;
    return run;
  }

  private cancel(run: IRun): void {
    run.active = false;
    this.active.delete(run);
  }

  private activeMain(): number {
    let n = 0;
    for (const r of this.active) if (r.kind === 'main') n += 1;
    return n;
  }

  private finish(run: IRun): void {
    this.cancel(run);
    const ok = !run.fails;
    if (run.kind === 'bisection') {
      if (run.node) run.node.status = ok ? 'passed' : 'failed';
      return;
    }
    for (const e of run.tested) {
      if (e.run !== run || e.state !== 'testing') continue;
      e.state = ok ? 'passed' : 'pfail';
    }
    if (ok && this.policy.optimistic) {
      // A passing run proves every unmerged PR ahead of it that its branch holds.
      for (const e of run.deps) {
        if (!UNSETTLED.includes(e.state)) continue;
        const own = e.run;
        if (own) this.drop(own);
        e.state = 'passed';
        e.run = run;
      }
    }
  }

  /** Stop a run and its bisection, if any (the PRs are re-pointed by the caller). */
  private drop(run: IRun): void {
    if (run.active) this.cancel(run);
    this.abortBisection(run);
  }

  private abortBisection(root: IRun): void {
    const b = this.bisections.find((x) => x.root === root);
    if (!b) return;
    this.bisections = this.bisections.filter((x) => x !== b);
    for (const node of b.nodes) if (node.run?.active) this.cancel(node.run);
  }

  /** A run whose branch holds an ejected PR tests nothing that will merge: its PRs restart. */
  private supersede(run: IRun): void {
    this.drop(run);
    for (const e of this.order) {
      if (e.run === run) {
        e.state = 'pending';
        e.run = null;
      }
    }
  }

  private eject(e: IPr): void {
    e.state = 'ejected';
    e.run = null;
    this.order = this.order.filter((x) => x !== e);
    if (this.inWindow()) {
      if (e.bad) this.result.ejectedBad += 1;
      else this.result.ejectedGood += 1;
    }
    const runs = new Set<IRun>(this.active);
    for (const x of this.order) if (x.run) runs.add(x.run);
    for (const b of this.bisections) runs.add(b.root);
    for (const run of runs) if (run.members.has(e.n)) this.supersede(run);
  }

  private resolveFailures(): boolean {
    const groups = new Map<IRun, IPr[]>();
    for (const e of this.order) {
      if (e.state !== 'pfail' || !e.run) continue;
      groups.set(e.run, [...(groups.get(e.run) ?? []), e]);
    }
    let changed = false;
    for (const [run, members] of groups) {
      if (this.mustWait(run)) continue;
      changed = true;
      const [only] = members;
      if (members.length === 1 && only) this.eject(only);
      else this.startBisection(run, members);
    }
    return changed;
  }

  private mustWait(run: IRun): boolean {
    if (run.deps.some((d) => UNSETTLED.includes(d.state))) return true;
    if (this.depth === 0) return false;
    const lane = run.tested[0]!.lane;
    const last = Math.max(...run.tested.map((e) => this.order.indexOf(e)));
    const groups = new Map<IRun | IPr, IPr[]>();
    for (const e of this.order.slice(last + 1)) {
      if (e.lane !== lane) continue;
      const key = e.run ?? e;
      if (!groups.has(key) && groups.size >= this.depth) break;
      groups.set(key, [...(groups.get(key) ?? []), e]);
    }
    return [...groups.values()].some((g) => g.some((e) => e.state === 'pending' || e.state === 'testing'));
  }

  private startBisection(root: IRun, members: IPr[]): void {
    this.bisections.push({
      root,
      nodes: [{ prs: members, parent: null, status: 'failed', run: root, split: false }],
    });
    for (const e of members) e.state = 'bisecting';
  }

  private advanceBisections(): boolean {
    let changed = false;
    for (const b of [...this.bisections]) {
      b.nodes.forEach((node, i) => {
        if (node.status !== 'failed' || node.split || node.prs.length < 2) return;
        node.split = true;
        const mid = Math.ceil(node.prs.length / 2);
        b.nodes.push(
          { prs: node.prs.slice(0, mid), parent: i, status: 'waiting', run: null, split: false },
          { prs: node.prs.slice(mid), parent: i, status: 'blocked', run: null, split: false },
        );
        changed = true;
      });
      b.nodes.forEach((node, i) => {
        const left = b.nodes[i - 1];
        if (node.status !== 'blocked' || !left || left.parent !== node.parent) return;
        if (left.status === 'passed') node.status = 'failed';
        else if (left.status === 'failed') node.status = 'waiting';
        else return;
        changed = true;
      });
      for (const node of b.nodes) {
        if (node.status !== 'waiting') continue;
        let running = 0;
        for (const r of this.active) if (r.kind === 'bisection') running += 1;
        if (running >= this.bisectionConcurrency) break;
        const deps = b.root.deps.filter((e) => e.state !== 'merged');
        node.run = this.createRun('bisection', node.prs, deps, node);
        node.status = 'running';
        changed = true;
      }
      const settled = (n: INode) =>
        n.status === 'passed' || (n.status === 'failed' && (n.split || n.prs.length < 2));
      if (b.nodes.every(settled)) {
        this.finishBisection(b);
        changed = true;
      }
    }
    return changed;
  }

  private finishBisection(b: IBisection): void {
    this.bisections = this.bisections.filter((x) => x !== b);
    const [root] = b.nodes;
    if (!root) return;
    const culprits = b.nodes.filter((n) => !n.split && n.status === 'failed' && n.prs.length === 1);
    const proven = b.nodes
      .filter((n) => n.status === 'passed' && n.prs[0] === root.prs[0] && n.run !== null)
      .sort((x, y) => y.prs.length - x.prs.length)[0];
    const guilty: IPr[] = [];
    for (const e of root.prs) {
      if (culprits.some((n) => n.prs[0] === e)) guilty.push(e);
      else if (proven?.run && proven.prs.includes(e)) {
        e.state = 'passed';
        e.run = proven.run;
      } else {
        e.state = 'pending';
        e.run = null;
      }
    }
    for (const e of guilty) this.eject(e);
  }

  private mergeHeads(): boolean {
    let changed = false;
    for (let again = true; again; ) {
      again = false;
      const seen = new Set<number>();
      for (const e of this.order) {
        if (seen.has(e.lane)) continue;
        seen.add(e.lane);
        if (e.state !== 'passed') continue;
        e.state = 'merged';
        e.run = null;
        this.order = this.order.filter((x) => x !== e);
        if (this.inWindow()) this.result.merged += 1;
        again = true;
        changed = true;
        break;
      }
    }
    return changed;
  }

  private startRuns(): boolean {
    let changed = false;
    let running = this.activeMain();
    const ahead = new Map<number, IPr[]>();
    const blocked = new Set<number>();
    for (let i = 0; i < this.order.length; i += 1) {
      const e = this.order[i]!;
      const lane = ahead.get(e.lane) ?? [];
      ahead.set(e.lane, lane);
      if (e.state === 'pending' && !blocked.has(e.lane)) {
        if (running >= this.c) break;
        const group = [e];
        if (this.b > 1 && this.k === 1) {
          for (let j = i + 1; j < this.order.length && group.length < this.b; j += 1) {
            const m = this.order[j]!;
            if (m.state !== 'pending') break;
            group.push(m);
          }
        }
        const run = this.createRun('main', group, [...lane], null);
        for (const g of group) {
          g.state = 'testing';
          g.run = run;
        }
        running += 1;
        changed = true;
      } else if (e.state === 'pending') {
        continue;
      }
      if (e.state === 'pending') blocked.add(e.lane);
      lane.push(e);
    }
    return changed;
  }
}

/** One idealised run. */
export function simulateIdeal(policy: IdealPolicy, model: IdealModel, opts: IdealRunOptions): IdealResult {
  return new IdealQueue(policy, model, opts).run();
}

export interface IdealEstimate {
  mergedPerHour: number;
  /** Standard error of the mean over the seeds. */
  stdError: number;
  seeds: number;
  hours: number;
}

/** The idealised queue over seeds seed, seed+1, …: mean merged/h and its standard error. */
export function estimateIdeal(
  policy: IdealPolicy,
  model: IdealModel,
  o: { seed: number; seeds: number; hours: number; warmupHours?: number },
): IdealEstimate {
  const xs: number[] = [];
  for (let i = 0; i < o.seeds; i += 1) {
    xs.push(
      simulateIdeal(policy, model, { seed: o.seed + i, hours: o.hours, warmupHours: o.warmupHours })
        .mergedPerHour,
    );
  }
  const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(1, xs.length - 1);
  return { mergedPerHour: mean, stdError: Math.sqrt(variance / xs.length), seeds: o.seeds, hours: o.hours };
}

/** The idealised policy of a bench configuration (bench/queue-sim.ts QueueScenario and settingsFor). */
export function policyFor(s: {
  concurrency: number;
  batchSize?: number;
  antiFlake?: boolean;
  targets?: number;
}): IdealPolicy {
  return {
    concurrency: s.concurrency,
    batchSize: s.batchSize,
    bisectionConcurrency: Math.max(2, 2 * s.concurrency),
    optimistic: s.antiFlake ?? false,
    pendingFailureDepth: s.antiFlake ? 1 : 0,
    lanes: s.targets,
  };
}
