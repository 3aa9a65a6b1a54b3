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
 * - bisection on the side (bisection_skip_redundant_tests): a failed batch leaves the line at once (its
 *   PRs wait aside) and every run whose branch holds one of its PRs restarts without it; a failed segment
 *   is halved, the left half runs first and the right half is inferred to fail when the left passes;
 *   each segment runs (from a separate pool of bisectionConcurrency) in the line, behind what the line
 *   tests once everything else settled: a passing segment merges in line order, a failing one goes aside
 *   again (restarting the runs built on it); single failing PRs are ejected.
 *
 * Options that the engine does not have (off by default; issue 26, a policy that reaches 3× at f = 0):
 * - sideSegments: segments run in the bisection pool off the line, on the target branch as merged so far
 *   ('head') or on top of every PR the line tests ('tip', retested when one of those leaves the line, its
 *   failure counted once they all merged); no main run is built on a segment, so a segment never restarts
 *   the window and the window's failures never restart it ('head'). A passing segment merges nothing: its
 *   PRs, cleared (every PR in it is good: a run holding a bad PR always fails), go back to the line at the
 *   front of the PRs waiting for a slot; a failing one is halved (a single PR is ejected), the right half
 *   inferred failed when the left passes, as before;
 * - clearedRideFree: cleared PRs join the next main batch on top of its B fresh PRs (they add no risk);
 * - maxBatchSize: the batch size grows with the PRs waiting for a slot, ⌊waiting / C⌋ within [B, max].
 * Every merge is checked: the PRs of the lane merged since its proving run started, then the PR itself, are
 * a prefix of that run's branch (checkSafe), so a PR merges only after a passing run whose branch was
 * exactly the history it lands on plus it (optimistic merge: plus it and PRs behind it).
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
  /**
   * Where bisection segments run (batching only; undefined: in the line, as the engine does today).
   * 'head': in the bisection pool on the target branch as merged so far; 'tip': in the bisection pool on
   * top of every PR the line tests at that moment. Either way no main run is built on a segment and a
   * segment's pass merges nothing: it clears its PRs, which go back to the line at the front of the PRs
   * waiting for a slot and merge only through a passing main run, like any PR (see the header comment).
   */
  sideSegments?: 'head' | 'tip';
  /** With sideSegments: cleared PRs ride in the next main batch on top of its B fresh PRs. */
  clearedRideFree?: boolean;
  /**
   * Batch size grows with the line: ⌊PRs waiting for a slot / C⌋, at least B, at most this (Trunk's
   * target batch size as a minimum, GitHub's group size as a maximum). The backlog scales with it.
   */
  maxBatchSize?: number;
}

/** Where the main slots' time went (simulated hours, runs that ended or stopped in the measured window). */
export interface IdealStats {
  /** Main-run hours: all, run to a pass, run to a failure, stopped before the end (restarts). */
  mainHours: number;
  mainPassedHours: number;
  mainFailedHours: number;
  mainCancelledHours: number;
  /** Main runs that ran to the end and whose result was then thrown away (a PR ahead left the line). */
  mainSupersededHours: number;
  /** Of the stopped and superseded main-run hours: those a bisection segment's outcome caused. */
  mainStoppedBySegmentHours: number;
  bisectionHours: number;
  bisectionCancelledHours: number;
  bisectionSupersededHours: number;
  /** PR-hours spent aside (waiting on or under test in a bisection), and PRs of failed batches set aside. */
  prHoursAside: number;
  prsSetAside: number;
  /** Mean PRs per main run started. */
  mainBatchMean: number;
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
  stats?: IdealStats;
}

export interface Ceiling {
  name: string;
  formula: string;
  perHour: number;
  /**
   * The closed form is an upper bound, not the policy's value (batching with side bisection: it lets
   * every segment merge without waiting on the window). The policy's ceiling is then the idealised
   * queue's long-run rate (policyCeiling).
   */
  bound?: true;
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
    const r = batchWindow(b, c, policy.bisectionConcurrency ?? Math.max(2, 2 * c), model);
    return {
      name: `speculative batches, side bisection (${r.rounds.toFixed(2)} rounds per bisection)`,
      formula: '(B·Σ_{i=1..C}(1−q_B)^i + (1−(1−q_B)^C)·G)/T',
      perHour: r.mergedPerT / t,
      bound: true,
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
  /** PRs proven by the passing segment that starts at the batch's first PR. */
  merged: number;
  /** Rounds of T the bisection took. */
  rounds: number;
  /** The batch's other good PRs not ejected (with side bisection they merge too: merged + retested). */
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

export interface BatchWindow {
  /** Expected PRs merged per T. */
  mergedPerT: number;
  /** G: expected good PRs of a failed batch that its bisection lets merge (the rest a flake ejected). */
  goodPerFailure: number;
  /** q_B: probability that a batch of fresh PRs fails. */
  qB: number;
  /** Mean bisection rounds per failed batch. */
  rounds: number;
}

/**
 * Speculative batches with side bisection, fixed T: C batches of B fresh PRs start together; after T the
 * leading passes merge, the first failing batch leaves the line and every batch behind it restarts
 * without it, so the window is the speculative window of C runs with q_B = 1 − (1 − p)^B(1 − f) per
 * batch: B·Σ_{i=1..C}(1 − q_B)^i PRs merge per T. The failed batch (probability 1 − (1 − q_B)^C per T) is
 * bisected in its own pool while later windows run; its segments run behind the window and merge when
 * they pass, so its good PRs all merge except those a flake in the bisection ejects: G on average.
 */
export function batchWindow(b: number, c: number, bisectionConcurrency: number, m: IdealModel): BatchWindow {
  const p = m.failureRate;
  const f = m.flakeRate;
  let failProb = 0;
  let good = 0;
  let rounds = 0;
  for (let mask = 0; mask < 2 ** b; mask += 1) {
    const bad = Array.from({ length: b }, (_, i) => ((mask >> i) & 1) === 1);
    const nBad = bad.filter(Boolean).length;
    const w = p ** nBad * (1 - p) ** (b - nBad) * (nBad > 0 ? 1 : f);
    if (w === 0) continue;
    failProb += w;
    for (const o of bisectionOutcomes(bad, f, bisectionConcurrency)) {
      good += w * o.prob * (o.merged + o.retested);
      rounds += w * o.prob * o.rounds;
    }
  }
  const qB = 1 - (1 - p) ** b * (1 - f);
  const goodPerFailure = failProb > 0 ? good / failProb : 0;
  const mergedPerT = b * windowMerges(qB, c) + (1 - (1 - qB) ** c) * goodPerFailure;
  return { mergedPerT, goodPerFailure, qB, rounds: failProb > 0 ? rounds / failProb : 0 };
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
  /** Cleared by a side segment (sideSegments): back in the line, not known to be bad. */
  cleared?: boolean;
}

interface IRun {
  kind: 'main' | 'bisection';
  tested: IPr[];
  deps: IPr[];
  members: Set<number>;
  fails: boolean;
  active: boolean;
  node: INode | null;
  start: number;
  end: number;
  /** Reported (finish), as opposed to stopped. */
  reported?: boolean;
  /** PRs of its lane merged when it started (its branch: the lane's target then, deps, tested). */
  base: number;
}

interface INode {
  prs: IPr[];
  parent: number | null;
  status: 'waiting' | 'blocked' | 'running' | 'passed' | 'failed';
  run: IRun | null;
  split: boolean;
  retry?: boolean;
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
  private readonly side: 'head' | 'tip' | undefined;
  private readonly maxB: number;
  /** Side segments that failed, waiting for the PRs they were built on to settle. */
  private sideFailed: IRun[] = [];
  private readonly stats: IdealStats = {
    mainHours: 0,
    mainPassedHours: 0,
    mainFailedHours: 0,
    mainCancelledHours: 0,
    mainSupersededHours: 0,
    mainStoppedBySegmentHours: 0,
    bisectionHours: 0,
    bisectionCancelledHours: 0,
    bisectionSupersededHours: 0,
    prHoursAside: 0,
    prsSetAside: 0,
    mainBatchMean: 0,
  };
  /** Every PR merged, in order, per lane (the safety check reads it; lanes are independent targets). */
  private readonly landed = new Map<number, number[]>();
  /** A segment's outcome is being acted on (stats only). */
  private bySegment = false;
  private mainStarted = 0;
  private mainPrsStarted = 0;
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
    this.side = this.b > 1 ? policy.sideSegments : undefined;
    this.maxB = Math.max(this.b, policy.maxBatchSize ?? this.b);
    this.backlog = 2 * this.c * this.maxB + 4 * this.k + 4;
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
      this.countAside(next.at);
      this.now = next.at;
      this.finish(next.value);
      this.refill();
      this.reconcile();
    }
    this.result.mergedPerHour = this.result.merged / this.opts.hours;
    this.stats.mainBatchMean = this.mainStarted > 0 ? this.mainPrsStarted / this.mainStarted : 0;
    this.result.stats = this.stats;
    return this.result;
  }

  private countAside(until: number): void {
    const from = Math.max(this.now, this.windowStart);
    const to = Math.min(until, this.windowEnd);
    if (to <= from) return;
    let aside = 0;
    for (const e of this.order) if (this.inBisection(e)) aside += 1;
    this.stats.prHoursAside += (aside * (to - from)) / HOUR;
  }

  /** Charges a run's time to `key` (and to its kind's total) when it ends or stops in the window. */
  private charge(run: IRun, key: 'passed' | 'failed' | 'cancelled' | 'superseded', hours: number): void {
    if (!this.inWindow()) return;
    const s = this.stats;
    if (run.kind === 'main') {
      if (key === 'passed') s.mainPassedHours += hours;
      else if (key === 'failed') s.mainFailedHours += hours;
      else if (key === 'cancelled') s.mainCancelledHours += hours;
      else s.mainSupersededHours += hours;
      if ((key === 'cancelled' || key === 'superseded') && this.bySegment)
        s.mainStoppedBySegmentHours += hours;
      if (key !== 'superseded') s.mainHours += hours;
    } else {
      if (key === 'cancelled') s.bisectionCancelledHours += hours;
      if (key === 'superseded') s.bisectionSupersededHours += hours;
      if (key !== 'superseded') s.bisectionHours += hours;
    }
  }

  private inWindow(): boolean {
    return this.now >= this.windowStart && this.now < this.windowEnd;
  }

  /** Keeps `backlog` PRs in the line: PRs of a failed batch being bisected do not count. */
  private refill(): void {
    let inLine = 0;
    for (const e of this.order) if (!this.inBisection(e)) inLine += 1;
    for (; inLine < this.backlog; inLine += 1) {
      const bad = this.prRand() < this.model.failureRate;
      const lane = Math.floor(this.prRand() * this.k);
      this.order.push({ n: this.nextPr++, bad, lane, state: 'pending', run: null });
    }
  }

  /**
   * A PR of a failed batch not settled yet: aside, or under test in a segment. As the engine counts them
   * (bisect.ts: bisecting) and the bench's refill does (queue-sim.ts): a PR its segment proved, waiting
   * to merge, is back in the line (counting it too made this queue restart segments ahead of the window
   * and refill more eagerly than the engine).
   */
  private inBisection(e: IPr): boolean {
    return e.state === 'bisecting' || (e.state === 'testing' && e.run?.kind === 'bisection');
  }

  private reconcile(): void {
    for (let changed = true; changed; ) {
      changed = this.resolveFailures();
      changed = this.resolveSideFailures() || changed;
      changed = this.advanceBisections() || changed;
      changed = this.mergeHeads() || changed;
      changed = this.startSegments(true) || changed;
      changed = this.startRuns() || changed;
      if (!changed) changed = this.startSegments(false);
    }
  }

  private createRun(kind: IRun['kind'], tested: IPr[], deps: IPr[], node: INode | null): IRun {
    const { durationMinutes, jitter, flakeRate } = this.model;
    const minutes = durationMinutes * (1 + jitter * (2 * this.ciRand() - 1));
    const flake = this.ciRand() < flakeRate;
    const all = [...deps, ...tested];
    const end = this.now + Math.round(minutes * 60_000);
    const run: IRun = {
      kind,
      tested,
      deps,
      members: new Set(all.map((e) => e.n)),
      fails: flake || all.some((e) => e.bad),
      active: true,
      node,
      start: this.now,
      end,
      base: this.landedIn(tested[0]!.lane).length,
    };
    this.active.add(run);
    this.heap.push(end, run);
    if (this.inWindow()) {
      this.result.runs += 1;
      if (kind === 'main') {
        this.mainStarted += 1;
        this.mainPrsStarted += tested.length;
      }
    }
    return run;
  }

  private cancel(run: IRun): void {
    if (run.active && !run.reported) this.charge(run, 'cancelled', (this.now - run.start) / HOUR);
    run.active = false;
    this.active.delete(run);
  }

  private activeMain(): number {
    let n = 0;
    for (const r of this.active) if (r.kind === 'main') n += 1;
    return n;
  }

  private finish(run: IRun): void {
    run.reported = true;
    this.cancel(run);
    const ok = !run.fails;
    this.charge(run, ok ? 'passed' : 'failed', (run.end - run.start) / HOUR);
    if (run.kind === 'bisection' && this.side) {
      const node = run.node?.status === 'running' && run.node.run === run ? run.node : null;
      if (!node) return;
      if (ok) {
        node.status = 'passed';
        this.clear(node.prs);
      } else this.sideFailed.push(run);
      return;
    }
    for (const e of run.tested) {
      if (e.run !== run || e.state !== 'testing') continue;
      e.state = ok ? 'passed' : 'pfail';
    }
    if (ok && run.node?.status === 'running' && run.node.run === run) run.node.status = 'passed';
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
    if (!run.active && !run.fails) this.charge(run, 'superseded', (run.end - run.start) / HOUR);
    this.drop(run);
    // A segment under test goes back aside, to be tested again.
    const node = run.node?.status === 'running' && run.node.run === run ? run.node : null;
    if (node) {
      node.status = 'waiting';
      node.run = null;
      node.retry = true;
    }
    for (const e of this.order) {
      if (e.run === run) {
        e.state = node ? 'bisecting' : 'pending';
        e.run = null;
      }
    }
  }

  /** PRs leave the line (ejected or aside): every run whose branch holds one of them restarts. */
  private invalidate(prs: IPr[], except: IRun | null): void {
    const runs = new Set<IRun>(this.active);
    for (const x of this.order) if (x.run) runs.add(x.run);
    for (const run of runs) if (run !== except && prs.some((e) => run.members.has(e.n))) this.supersede(run);
  }

  private eject(e: IPr): void {
    e.state = 'ejected';
    e.run = null;
    this.order = this.order.filter((x) => x !== e);
    if (this.inWindow()) {
      if (e.bad) this.result.ejectedBad += 1;
      else this.result.ejectedGood += 1;
    }
    this.invalidate([e], null);
  }

  private resolveFailures(): boolean {
    const groups = new Map<IRun, IPr[]>();
    for (const e of this.order) {
      if (e.state !== 'pfail' || !e.run) continue;
      groups.set(e.run, [...(groups.get(e.run) ?? []), e]);
    }
    let changed = false;
    for (const [run, members] of groups) {
      // Restarted earlier in this pass (a culprit ejected above was in its branch): that failure no longer
      // counts. Acting on it bisected a batch whose only fault was a bad PR ahead of it, so a flake-free
      // bisection ejected a good PR; the engine skips a failed run that went stale (resolve.ts: staleReason).
      if (!members.every((e) => e.state === 'pfail' && e.run === run)) continue;
      // Built on a PR that left the line since, or a segment its bisection no longer runs: retest.
      const orphan = run.kind === 'bisection' && !(run.node?.status === 'running' && run.node.run === run);
      if (orphan || run.deps.some((d) => d.state === 'bisecting')) {
        this.supersede(run);
        changed = true;
        continue;
      }
      if (this.mustWait(run)) continue;
      changed = true;
      const node = run.node?.status === 'running' && run.node.run === run ? run.node : null;
      if (node) {
        // A failed segment: a single PR is the culprit, more go aside again to be halved.
        node.status = 'failed';
        this.bySegment = true;
        if (node.prs.length === 1) for (const e of members) this.eject(e);
        else this.setAside(members, run);
        this.bySegment = false;
        continue;
      }
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
    if (this.inWindow()) this.stats.prsSetAside += members.length;
    this.bisections.push({
      root,
      nodes: [{ prs: members, parent: null, status: 'failed', run: root, split: false }],
    });
    this.setAside(members, root);
  }

  private setAside(members: IPr[], failed: IRun): void {
    for (const e of members) {
      e.state = 'bisecting';
      e.run = null;
    }
    this.invalidate(members, failed);
  }

  /**
   * Waiting segments start behind what the line tests (called once everything else settled); with
   * `retries`, segments whose run went stale start before the runs restarting with them, once more
   * than 2·C·B PRs wait in bisections (as the engine does).
   */
  private startSegments(retries: boolean): boolean {
    if (this.side) return retries ? false : this.startSideSegments();
    if (retries) {
      let waiting = 0;
      for (const e of this.order) if (this.inBisection(e)) waiting += 1;
      if (waiting <= 2 * this.c * this.b) return false;
    }
    let changed = false;
    for (const b of this.bisections) {
      for (const node of b.nodes) {
        if (node.status !== 'waiting' || (retries && !node.retry)) continue;
        let running = 0;
        for (const r of this.active) if (r.kind === 'bisection') running += 1;
        if (running >= this.bisectionConcurrency) return changed;
        const rest = this.order.filter((e) => !node.prs.includes(e));
        let at = 0;
        rest.forEach((e, i) => {
          if (e.state !== 'pending' && e.state !== 'bisecting') at = i + 1;
        });
        this.order = [...rest.slice(0, at), ...node.prs, ...rest.slice(at)];
        const lane = node.prs[0]!.lane;
        const deps = rest.slice(0, at).filter((e) => e.state !== 'bisecting' && e.lane === lane);
        const run = this.createRun('bisection', node.prs, deps, node);
        for (const e of node.prs) {
          e.state = 'testing';
          e.run = run;
        }
        node.run = run;
        node.status = 'running';
        changed = true;
      }
    }
    return changed;
  }

  /**
   * sideSegments: waiting segments start in the bisection pool, on the target branch ('head') or on top
   * of every PR the line tests ('tip'); their PRs stay aside and no main run is built on them.
   */
  private startSideSegments(): boolean {
    let changed = false;
    for (const b of this.bisections) {
      for (const node of b.nodes) {
        if (node.status !== 'waiting') continue;
        let running = 0;
        for (const r of this.active) if (r.kind === 'bisection') running += 1;
        if (running >= this.bisectionConcurrency) return changed;
        const lane = node.prs[0]!.lane;
        let deps: IPr[] = [];
        if (this.side === 'tip') {
          let at = 0;
          this.order.forEach((e, i) => {
            if (e.state !== 'pending' && e.state !== 'bisecting') at = i + 1;
          });
          deps = this.order.slice(0, at).filter((e) => e.state !== 'bisecting' && e.lane === lane);
        }
        node.run = this.createRun('bisection', node.prs, deps, node);
        node.status = 'running';
        changed = true;
      }
    }
    return changed;
  }

  /**
   * A failed side segment counts once every PR it was built on merged; if one of them left the line
   * (ejected or aside), the failure may be theirs: the segment runs again.
   */
  private resolveSideFailures(): boolean {
    let changed = false;
    const keep: IRun[] = [];
    for (const run of this.sideFailed) {
      const node = run.node;
      if (node?.status !== 'running' || node.run !== run) continue;
      if (run.deps.some((d) => d.state === 'ejected' || d.state === 'bisecting' || d.state === 'pending')) {
        this.charge(run, 'superseded', (run.end - run.start) / HOUR);
        node.status = 'waiting';
        node.run = null;
        node.retry = true;
        changed = true;
      } else if (run.deps.every((d) => d.state === 'merged')) {
        node.status = 'failed';
        changed = true;
      } else keep.push(run);
    }
    this.sideFailed = keep;
    return changed;
  }

  /** PRs a side segment cleared go back to the line, at the front of the PRs waiting for a slot. */
  private clear(prs: IPr[]): void {
    const rest = this.order.filter((e) => !prs.includes(e));
    let at = 0;
    rest.forEach((e, i) => {
      if (e.state !== 'pending' && e.state !== 'bisecting') at = i + 1;
    });
    for (const e of prs) {
      e.state = 'pending';
      e.run = null;
      e.cleared = true;
    }
    this.order = [...rest.slice(0, at), ...prs, ...rest.slice(at)];
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
      // A single PR inferred to fail (its left sibling passed) is the culprit.
      for (const node of b.nodes) {
        const [only] = node.prs;
        if (node.status !== 'failed' || node.prs.length !== 1 || only?.state !== 'bisecting') continue;
        this.bySegment = true;
        this.eject(only);
        this.bySegment = false;
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
  }

  private mergeHeads(): boolean {
    let changed = false;
    for (let again = true; again; ) {
      again = false;
      const seen = new Set<number>();
      for (const e of this.order) {
        if (seen.has(e.lane) || e.state === 'bisecting') continue;
        seen.add(e.lane);
        if (e.state !== 'passed') continue;
        this.checkSafe(e);
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

  /**
   * Safety: a PR merges only on a passing run whose branch was exactly the target as it is now plus it,
   * i.e. the PRs merged since the run started, then this one, are a prefix of the run's branch.
   */
  private checkSafe(e: IPr): void {
    const run = e.run;
    if (!run || run.fails || !run.reported)
      throw new Error(`ideal queue: PR ${e.n} merges without a passing run`);
    const branch = [...run.deps, ...run.tested];
    const landed = this.landedIn(e.lane);
    const since = landed.length - run.base;
    const ok =
      since < branch.length &&
      branch[since] === e &&
      branch.slice(0, since).every((x, i) => x.n === landed[run.base + i]);
    if (!ok) throw new Error(`ideal queue: PR ${e.n} merges onto a history its run did not test`);
    landed.push(e.n);
  }

  private landedIn(lane: number): number[] {
    let log = this.landed.get(lane);
    if (!log) {
      log = [];
      this.landed.set(lane, log);
    }
    return log;
  }

  /** Batch size now: B, or with maxBatchSize ⌊PRs waiting for a slot / C⌋ within [B, maxBatchSize]. */
  private batchCap(): number {
    if (this.maxB === this.b) return this.b;
    let waiting = 0;
    for (const e of this.order) if (e.state === 'pending') waiting += 1;
    return Math.min(this.maxB, Math.max(this.b, Math.floor(waiting / this.c)));
  }

  private startRuns(): boolean {
    let changed = false;
    let running = this.activeMain();
    const free = this.policy.clearedRideFree === true && this.side !== undefined;
    const ahead = new Map<number, IPr[]>();
    const blocked = new Set<number>();
    for (let i = 0; i < this.order.length; i += 1) {
      const e = this.order[i]!;
      if (e.state === 'bisecting') continue;
      const lane = ahead.get(e.lane) ?? [];
      ahead.set(e.lane, lane);
      if (e.state === 'pending' && !blocked.has(e.lane)) {
        if (running >= this.c) break;
        const group = [e];
        if (this.b > 1 && this.k === 1) {
          const cap = this.batchCap();
          // With clearedRideFree only PRs no segment cleared count against the batch size.
          let counted = free && e.cleared ? 0 : 1;
          for (let j = i + 1; j < this.order.length; j += 1) {
            const m = this.order[j]!;
            if (m.state === 'bisecting') continue;
            if (m.state !== 'pending') break;
            const counts = !(free && m.cleared);
            if (free ? counts && counted >= cap : group.length >= cap) break;
            group.push(m);
            if (counts) counted += 1;
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

/**
 * Hours the idealised queue (and the engine's row) runs before measuring a configuration whose ceiling is
 * a bound: with side bisection the PRs waiting in bisections start at zero and build up over the first
 * day until the rule that restarts stale segments ahead of the window (more than 2·C·B PRs in bisections)
 * holds them there. At B = 4, C = 5, f = 0 the idealised queue merges 21.65 ± 0.76/h over hours 1–25
 * and 19.01 ± 0.15/h over hours 48–448 (20 seeds, fixed T); with a 24 h warm-up 19.07 ± 0.17.
 */
export const SETTLE_HOURS = 48;

/**
 * The policy's ceiling: the closed form where it is the policy's value, else (a bound) the idealised
 * queue's long-run rate with a fixed T, after SETTLE_HOURS, over `seeds` seeds of `hours`.
 */
export function policyCeiling(
  policy: IdealPolicy,
  model: IdealModel,
  o: { seed: number; seeds: number; hours: number },
): Ceiling & { closedForm: number; estimate: IdealEstimate | null } {
  const closed = idealCeiling(policy, model);
  if (!closed.bound) return { ...closed, closedForm: closed.perHour, estimate: null };
  const estimate = estimateIdeal(policy, { ...model, jitter: 0 }, { ...o, warmupHours: SETTLE_HOURS });
  return {
    name: 'idealised queue of the policy, long run (the closed form is a bound)',
    formula: `IdealQueue, fixed T, ${o.seeds} seeds × ${o.hours} h after ${SETTLE_HOURS} h; bound ${closed.formula}`,
    perHour: estimate.mergedPerHour,
    closedForm: closed.perHour,
    estimate,
  };
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
    // The engine's bisection since session 22: segments on the target branch off the line, cleared PRs
    // back in the line ahead of fresh ones without counting towards the batch size.
    ...(s.batchSize !== undefined && s.batchSize > 1
      ? { sideSegments: 'head' as const, clearedRideFree: true }
      : {}),
  };
}
