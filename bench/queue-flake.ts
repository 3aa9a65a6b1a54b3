/**
 * Flake-protection bench: the merge-queue simulation with a test-suite model. A bad PR makes a healthy
 * test fail; a flake makes a known-flaky test fail (quarantined or FLAKY per the health data) or, now
 * and then, a test not yet known as flaky. Each failed run is judged as the server does it
 * (src/app/queue/flake-judge.ts `ciEvents` around src/domain/flake-protection.ts `judgeFailedRun`), with
 * flakeProtection off, ignore_quarantined and retry_flaky on the same seeds. Reports merged/h, good PRs
 * wrongly ejected and CI runs spent against the ceilings of mergequeue.md §1c. Simulated time only.
 */
import { type FlakeProtection, judgeFailedRun } from '../src/domain/flake-protection.ts';
import type { QueueEvent } from '../src/domain/queue/index.ts';
import type { SuiteParams } from './queue-ci.ts';
import {
  backlogFor,
  type Ceiling,
  type CiReported,
  ceilingFor,
  combine,
  type QueueScenario,
  QueueSim,
  range,
  resolve,
  type ScenarioResult,
  safety,
} from './queue-sim.ts';

export const FLAKE_MODES: FlakeProtection[] = ['off', 'ignore_quarantined', 'retry_flaky'];

/** A configuration of the flake bench; maxReplications caps its seeds (the costly ones get fewer). */
export type FlakeScenario = QueueScenario & { maxReplications?: number };

/**
 * Speculative configurations are bounded by (1−(1−q)^C)/(q·T) (`ceiling: 'speculative'`, 1/T at C = 1);
 * a batching scenario would use its own §1c form (serial_batch / combined_batch).
 */
export const FLAKE_SCENARIOS: FlakeScenario[] = [
  { id: 'serial', label: 'single, concurrency 1', mode: 'single', concurrency: 1, ceiling: 'speculative' },
  { id: 'spec5', label: 'single, concurrency 5', mode: 'single', concurrency: 5, ceiling: 'speculative' },
  {
    id: 'antiflake5',
    label: 'single, concurrency 5, optimistic + pending-failure depth 1',
    mode: 'single',
    concurrency: 5,
    antiFlake: true,
    ceiling: 'speculative',
  },
  {
    id: 'spec25',
    label: 'single, concurrency 25',
    mode: 'single',
    concurrency: 25,
    ceiling: 'speculative',
    maxReplications: 1,
  },
];

export const DEFAULT_SUITE: SuiteParams = {
  healthyTests: 500,
  flakyTests: 20,
  quarantinedShare: 0.7,
  unknownFlakeShare: 0.05,
};

export interface FlakeBenchOptions {
  seed?: number;
  /** Measured window per seed (simulated hours), after the warm-up. */
  hours?: number;
  warmupHours?: number;
  durationMinutes?: number;
  jitter?: number;
  /** Real-failure rate p per PR. */
  failureRate?: number;
  /** Flake rates f per run. */
  flakeRates?: number[];
  modes?: FlakeProtection[];
  scenarios?: FlakeScenario[];
  suite?: Partial<SuiteParams>;
  /**
   * Seeds per (configuration, f): seed, seed+1, … until the `off` run merged minMerged PRs in total
   * (at most maxReplications); the other modes then run on exactly those seeds.
   */
  minMerged?: number;
  maxReplications?: number;
  log?: (line: string) => void;
}

export interface FlakeCell {
  scenario: string;
  label: string;
  concurrency: number;
  flakeRate: number;
  mode: FlakeProtection;
  result: ScenarioResult;
  /** The §1c ceiling with q = p + f, e.g. (1−(1−q)^C)/(q·T) for a speculative window (1/T at C = 1). */
  qCeiling: Ceiling;
  /** The same formula when flakes stop counting (q → p), e.g. (1−(1−p)^C)/(p·T). */
  pCeiling: Ceiling;
  /** Failed runs judged: passed (only quarantined tests failed), retried, or real failures. */
  ignored: number;
  retried: number;
  realFailures: number;
  /** The configuration's own cap on seeds, if any. */
  seedCap: number | null;
  /** merged/h relative to flakeProtection off on the same seeds (0 for off itself). */
  gain: number;
}

export interface FlakeBenchReport {
  params: {
    seed: number;
    hours: number;
    warmupHours: number;
    durationMinutes: number;
    jitter: number;
    failureRate: number;
    flakeRates: number[];
    modes: FlakeProtection[];
    suite: SuiteParams;
    minMerged: number;
    maxReplications: number;
  };
  cells: FlakeCell[];
  seconds: number;
}

interface Judged {
  ignored: number;
  retried: number;
  realFailures: number;
}

/**
 * The server's `ciEvents` for a run whose checks all reported, on simulated data: every run uploads
 * its results (one upload), only main runs are judged, and the retry is spent per tested PR head.
 */
function judge(
  mode: FlakeProtection,
  retries: Map<string, number>,
  counts: Judged,
): NonNullable<ConstructorParameters<typeof QueueSim>[1]['report']> {
  return (report: CiReported, ci, run, sim): QueueEvent[] => {
    const failed = report.checks.filter((c) => c.outcome === 'failed');
    if (failed.length === 0 || mode === 'off' || run.kind !== 'main') return [report];
    const tests = (ci.failedTests ?? []).map((t) => ({
      testCaseId: t.name,
      name: t.name,
      failed: true,
      quarantined: t.quarantined,
      status: t.status,
    }));
    const heads = run.prHeads.filter((h) => run.tested.includes(h.number));
    const key = (h: { number: number; sha: string }) => `${h.number}@${h.sha}`;
    const spent = Math.max(0, ...heads.map((h) => retries.get(key(h)) ?? 0));
    const j = judgeFailedRun({ mode, uploads: 1, tests, retriesSpent: spent });
    const counted = sim.inWindow();
    switch (j.kind) {
      case 'ignore':
        if (counted) counts.ignored += 1;
        return [{ ...report, verdict: { status: 'succeeded', reason: j.reason } }];
      case 'retry':
        if (counted) counts.retried += 1;
        for (const h of heads) retries.set(key(h), (retries.get(key(h)) ?? 0) + 1);
        return [{ type: 'pr_restart_requested', prNumber: run.tested[0] ?? 0 }];
      case 'off':
        return [report];
      default:
        if (counted) counts.realFailures += 1;
        return [
          {
            ...report,
            verdict: {
              status: 'failed',
              reason: `required checks failed: ${failed.map((c) => c.name).join(', ')}; ${j.reason}`,
            },
          },
        ];
    }
  };
}

export async function runFlakeBench(options: FlakeBenchOptions = {}): Promise<FlakeBenchReport> {
  const started = performance.now();
  const base = resolve({
    seed: options.seed,
    hours: options.hours ?? 24,
    warmupHours: options.warmupHours,
    durationMinutes: options.durationMinutes,
    jitter: options.jitter,
    failureRate: options.failureRate,
  });
  const flakeRates = options.flakeRates ?? [0.05, 0.15];
  const modes = options.modes ?? FLAKE_MODES;
  const scenarios = options.scenarios ?? FLAKE_SCENARIOS;
  const suite: SuiteParams = { ...DEFAULT_SUITE, ...options.suite };
  const minMerged = options.minMerged ?? 600;
  const maxReplications = options.maxReplications ?? 8;
  const log = options.log ?? (() => {});
  const order = modes.includes('off') ? ['off' as const, ...modes.filter((m) => m !== 'off')] : modes;
  const cells: FlakeCell[] = [];
  for (const scenario of scenarios) {
    for (const flakeRate of flakeRates) {
      let seeds = 0;
      let offPerHour: number | null = null;
      for (const mode of order) {
        const t = performance.now();
        const counts: Judged = { ignored: 0, retried: 0, realFailures: 0 };
        const reps: ScenarioResult[] = [];
        const more = () =>
          seeds > 0
            ? reps.length < seeds
            : reps.length < (scenario.maxReplications ?? maxReplications) &&
              reps.reduce((n, r) => n + r.merged, 0) < minMerged;
        while (more()) {
          const retries = new Map<string, number>();
          const cfg = {
            scenario,
            flakeRate,
            backlog: backlogFor(scenario),
            arrivalPerHour: 0,
            suite,
            report: judge(mode, retries, counts),
          };
          reps.push(new QueueSim({ ...base, seed: base.seed + reps.length }, cfg).run());
          await new Promise((r) => setImmediate(r));
        }
        seeds = reps.length;
        const result = combine(reps, base.hours);
        if (mode === 'off') offPerHour = result.mergedPerHour;
        const p = base.failureRate;
        cells.push({
          scenario: scenario.id,
          label: scenario.label,
          concurrency: scenario.concurrency,
          flakeRate,
          mode,
          result,
          qCeiling: ceilingFor(scenario, p, flakeRate, base.durationMinutes),
          pCeiling: ceilingFor(scenario, p, 0, base.durationMinutes),
          ...counts,
          seedCap: scenario.maxReplications ?? null,
          gain: offPerHour !== null && offPerHour > 0 ? result.mergedPerHour / offPerHour - 1 : 0,
        });
        log(
          `  flake ${scenario.id} f=${pct(flakeRate)} ${mode}: ${result.mergedPerHour.toFixed(2)} merged/h, ${result.ejectedGood} good ejected, ${result.runsStarted} runs (${counts.retried} retries), ${seeds} seeds, ${Math.round(performance.now() - t)} ms`,
        );
      }
    }
  }
  return {
    params: {
      seed: base.seed,
      hours: base.hours,
      warmupHours: base.warmupHours,
      durationMinutes: base.durationMinutes,
      jitter: base.jitter,
      failureRate: base.failureRate,
      flakeRates,
      modes,
      suite,
      minMerged,
      maxReplications,
    },
    cells,
    seconds: (performance.now() - started) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------------
// Markdown.

function pct(x: number): string {
  return `${Math.round(x * 1000) / 10}%`;
}

function num(x: number, digits = 2): string {
  return x.toFixed(digits);
}

function signed(x: number): string {
  const v = Math.round(x * 1000) / 10;
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v)}%`;
}

/** The parameters in words, for the line above the table. */
export function describeFlakeParams(report: FlakeBenchReport): string {
  const p = report.params;
  const s = p.suite;
  const quarantined = Math.round(s.quarantinedShare * s.flakyTests);
  const t = p.durationMinutes / 60;
  const sat = p.flakeRates
    .map((f) => `q = ${pct(p.failureRate + f)}: 1/(q·T) = ${num(1 / ((p.failureRate + f) * t))}/h`)
    .join(', ');
  return (
    `T = ${p.durationMinutes} min ± ${pct(p.jitter)}, p = ${pct(p.failureRate)} per PR, f ∈ {${p.flakeRates.map(pct).join(', ')}} per run; ` +
    `suite: a bad PR fails one of ${s.healthyTests} healthy tests; a flaky run fails one test: with probability ${pct(s.unknownFlakeShare)} a test not yet known as flaky (HEALTHY, a real failure to every mode), ` +
    `else one of ${s.flakyTests} known-flaky tests, ${quarantined} quarantined (${pct(quarantined / s.flakyTests)}) and ${s.flakyTests - quarantined} FLAKY not quarantined; ` +
    `every run uploads its results. Saturation points (C → ∞): ${sat}; 1/(p·T) = ${num(1 / (p.failureRate * t))}/h. ` +
    `${p.hours} h measured after ${p.warmupHours} h warm-up per seed; seeds from ${p.seed} until the off run merged ≥ ${p.minMerged} PRs (≤ ${p.maxReplications} seeds; ${capped(report)}), the same seeds for every mode.`
  );
}

function capped(report: FlakeBenchReport): string {
  const few = report.cells.filter((c) => c.mode === report.params.modes[0] && c.seedCap !== null);
  const labels = [...new Set(few.map((c) => `${c.seedCap} for ${c.label}`))];
  return labels.length > 0 ? labels.join(', ') : 'no configuration capped lower';
}

export function formatFlakeReport(report: FlakeBenchReport): string {
  const lines: string[] = [
    `Flake protection, simulated: ${describeFlakeParams(report)}`,
    '',
    '| configuration | f | flakeProtection | merged/h (range, seeds) | gain vs off | ceiling formula | 1/(q·T)-style ceiling/h | ratio | 1/(p·T)-style ceiling/h (q → p) | ratio | good PRs wrongly ejected | runs started | retries | ignored (quarantined) | runs/merged | CI h/merged | safety |',
    '|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const c of report.cells) {
    const r = c.result;
    lines.push(
      `| ${c.label} | ${pct(c.flakeRate)} | ${c.mode} | ${num(r.mergedPerHour)}${range(r)} | ${c.mode === 'off' ? '—' : signed(c.gain)} | ${c.qCeiling.formula} | ` +
        `${num(c.qCeiling.perHour)} | ${num(r.mergedPerHour / c.qCeiling.perHour)} | ${num(c.pCeiling.perHour)} | ${num(r.mergedPerHour / c.pCeiling.perHour)} | ` +
        `${r.ejectedGood} of ${r.merged + r.ejectedGood} | ${r.runsStarted} | ${c.retried} | ${c.ignored} | ${num(r.runsPerMerged)} | ${num(r.ciHoursPerMerged)} | ${safety(r)} |`,
    );
  }
  lines.push(
    '',
    'Ceilings as in mergequeue.md §1c: for a speculative window C, (1−(1−q)^C)/(q·T) with q = p + f (saturating at 1/(q·T)), and the same with q → p, (1−(1−p)^C)/(p·T) (saturating at 1/(p·T)), the bound once flakes no longer count; both are 1/T at C = 1. ' +
      'Good PRs wrongly ejected: good PRs that ended failed, of all good PRs that ended (merged or failed). Runs started count every CI run begun in the window, retries included; counts are totals over the seeds.',
  );
  return lines.join('\n');
}

/** A plain reading of the figures, for the docs section. */
export function flakeReading(report: FlakeBenchReport): string[] {
  const out: string[] = [];
  const p = report.params;
  const cell = (scenario: string, f: number, mode: FlakeProtection) =>
    report.cells.find((c) => c.scenario === scenario && c.flakeRate === f && c.mode === mode);
  const scenarios = [...new Set(report.cells.map((c) => c.scenario))];
  const unsafe = report.cells.filter(
    (c) => c.result.badMerged > 0 || c.result.untestedMerges > 0 || c.result.stall,
  );
  out.push(
    unsafe.length === 0
      ? '- **Safety**: no bad PR merged in any mode (a bad PR always makes a healthy test fail, a real failure to every mode), every merge was covered by a passing run on the then-current target, and no run stalled.'
      : `- **Safety or liveness problems** in: ${unsafe.map((c) => `${c.label} f=${pct(c.flakeRate)} ${c.mode}`).join(', ')}.`,
  );
  for (const id of scenarios) {
    const parts: string[] = [];
    let label = id;
    for (const f of p.flakeRates) {
      const off = cell(id, f, 'off');
      if (!off) continue;
      label = off.label;
      const others = p.modes
        .filter((m) => m !== 'off')
        .map((m) => cell(id, f, m))
        .filter((c): c is FlakeCell => c !== undefined);
      const desc = others
        .map(
          (c) =>
            `${c.mode} ${num(c.result.mergedPerHour)}/h (${signed(c.gain)}; ${num(c.result.mergedPerHour / c.pCeiling.perHour)} of the q → p ceiling), ${c.result.ejectedGood} wrongly ejected, ${num(c.result.runsPerMerged)} runs/merged`,
        )
        .join('; ');
      parts.push(
        `f = ${pct(f)}: off ${num(off.result.mergedPerHour)}/h (${num(off.result.mergedPerHour / off.qCeiling.perHour)} of ${num(off.qCeiling.perHour)}), ${off.result.ejectedGood} wrongly ejected, ${num(off.result.runsPerMerged)} runs/merged; ${desc}`,
      );
    }
    out.push(`- **${label}**: ${parts.join('. ')}.`);
  }
  const single = report.cells.filter((c) => c.mode === p.modes[0] && c.result.replications === 1);
  if (single.length > 0) {
    const labels = [...new Set(single.map((c) => c.label))].join(', ');
    out.push(
      `- **One seed only** for ${labels} (to keep this part near a minute): single 24 h seeds of a saturated speculative queue vary by ±15–20%, so read those gains as rough figures, not to the percent.`,
    );
  }
  const s = p.suite;
  const known = 1 - s.unknownFlakeShare;
  out.push(
    '- **Why**: without protection every flaky failure ejects a good PR and, in a speculative window, restarts every run behind it; that is what holds off to the 1/(q·T)-style bound. ' +
      `ignore_quarantined turns the ${pct(known * s.quarantinedShare)} of flaky failures that hit a quarantined test into passes; retry_flaky also reruns the ${pct(known * (1 - s.quarantinedShare))} that hit a FLAKY test, once per PR head. ` +
      'With flakes out of q, the speculative configurations pass their 1/(q·T)-style ceiling (ratio > 1) and approach the 1/(p·T)-style one; the gain grows with f and with C, since a flake at C = 25 costs up to 24 restarted runs.',
    `- **What still ejects good PRs**: flakes in tests not yet known as flaky (${pct(s.unknownFlakeShare)} of flakes, a real failure to every mode), under ignore_quarantined the FLAKY-not-quarantined ones, and under retry_flaky a second flake in the retry (the retry is spent) or a flake in a PR's run after a restart.`,
    '- **CI cost**: retries are few (one extra run each) and are paid back: each avoided ejection saves the restart of the runs behind, so runs/merged fall or stay level everywhere and runs started fall in the speculative configurations without optimistic merge. ' +
      'At concurrency 1 retry_flaky merges exactly as many PRs as ignore_quarantined: a retry and an ejection both cost one slot of T, and the slot after an ejection merges the next PR; the difference is only who merges (no good PR lost).',
    '- **With optimistic merge + pending-failure depth 1** the engine already clears most flaky failures when the run behind passes, so flake protection adds little throughput there; it still removes the remaining wrong ejections.',
  );
  return out;
}
