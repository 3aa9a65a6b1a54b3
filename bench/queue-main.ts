// Merge-queue bench on its own: `node --import tsx bench/queue-main.ts`. Prints the tables and writes
// docs/benchmarks-queue.md. Environment: BENCH_QUEUE_HOURS (default 24), BENCH_QUEUE_SEED,
// BENCH_QUEUE_COST_PRS (default 1000), BENCH_QUEUE_COST_ITERATIONS (default 100), BENCH_QUEUE_DOCS
// (output file, or 0 to skip writing), BENCH_QUEUE_FLAKE: 0 skips the flake-protection part, `only`
// runs just that part and replaces its section in the existing output file.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  describeFlakeParams,
  type FlakeBenchReport,
  flakeReading,
  formatFlakeReport,
  runFlakeBench,
} from './queue-flake.ts';
import { formatQueueReport, type QueueBenchReport, runQueueBench, type ScenarioResult } from './queue-sim.ts';

function envNumber(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${v}`);
  return n;
}

function machine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
  return (
    `${cpu}, ${os.availableParallelism()} cores, ${Math.round(os.totalmem() / 1024 ** 3)} GiB, ` +
    `${os.type()} ${os.release()}, Node ${process.version}; load average at the end ${load}`
  );
}

function command(): string {
  const env = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_QUEUE_'))
    .map(([k, v]) => `${k}=${v}`);
  return [...env, 'node --import tsx bench/queue-main.ts'].join(' ');
}

const f2 = (x: number) => x.toFixed(2);
const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

function find(report: QueueBenchReport, id: string, flake: number): ScenarioResult | undefined {
  return report.throughput.find((r) => r.scenario === id && r.flakeRate === flake);
}

/** A plain reading of the figures; the mechanisms come from tracing the simulation event by event. */
function reading(report: QueueBenchReport): string[] {
  const out: string[] = [];
  const flakes = report.params.flakeRates;
  const fMax = Math.max(...flakes);
  const describe = (id: string) =>
    flakes
      .map((f) => find(report, id, f))
      .filter((r): r is ScenarioResult => r !== undefined)
      .map((r) => `${f2(r.mergedPerHour)}/h = ${f2(r.ratio)} at f = ${pct(r.flakeRate)}`)
      .join(', ');
  const unsafe = report.throughput.filter((r) => r.badMerged > 0 || r.untestedMerges > 0 || r.stall);
  out.push(
    unsafe.length === 0
      ? '- **Safety and liveness**: in every run no bad PR merged, every merge was covered by a passing run on the then-current target history (checked by the simulator against its own record of the target branch), and the engine never stalled (no 10·T without a merge while PRs were queued).'
      : `- **Safety or liveness problems** in: ${unsafe.map((r) => `${r.label} f=${pct(r.flakeRate)}`).join(', ')} (see the safety column).`,
    `- **Serial** (${describe('serial')}): one run at a time, so the bound 1/T counts every PR processed; a bad PR or a flake uses a slot without a merge, hence merged/h ≈ (1 − p)(1 − f)/T. Processed/h sits at the ceiling: no engine overhead beyond CI.`,
    `- **Speculative, concurrency 5 and 25** (${describe('spec5')}; ${describe('spec25')}): with f = 0 the engine reaches the formula (or exceeds it at C = 25: the formula models synchronous windows where a failure wastes the rest of a window for a full T, while the engine restarts the runs behind a failure at once and the pipeline stays staggered). With flakes the ratio falls because each flaky failure of PR k, without optimistic merge, ejects k (a good PR: see "good PRs ejected") and restarts every run behind it; the wasted runs show in runs/merged (up to ${f2(find(report, 'spec25', fMax)?.runsPerMerged ?? 0)} at C = 25, f = ${pct(fMax)}).`,
    `- **Anti-flake** (optimistic merge + pending-failure depth 1; ${describe('antiflake5')}): a flaky failure is cleared when the run behind passes, so throughput stays near the q → p bound and good-PR ejections nearly vanish; this is the configuration that meets its ceiling across flake rates, as §1c predicts.`,
    `- **Batching 4, concurrency 1** (${describe('batch4')}): below B(1−q)^B/T at low f because the formula charges a failed batch one run, while the engine then bisects it (1–2 more rounds of T, during which the next batch tests on top of the failed one and is usually wasted); above it at f = ${pct(fMax)} because the formula takes (1−q)^B with q = p + f per PR while a flake strikes once per run, and because bisection still merges the passing head of a failed batch. Seeds vary a lot here (see the range). With bisection_skip_redundant_tests a flaky batch failure ejects a good PR: the left half passes on rerun and the right half is inferred guilty without a run.`,
    `- **Batching 4, concurrency 5** (${describe('batch4c5')}): the furthest below its ceiling. C·B·(1−q)^B/T ignores bisection: a failed batch is bisected serially (2–3 rounds of T), and every batch behind it contains the failed batch in its predicted base, so it fails too or is restarted when the culprit is ejected. With 20 PRs in flight the chance that none is bad is 0.95^20 ≈ 36%, so most windows pay a bisection during which nothing merges. The engine behaves as designed here; the bound is optimistic for speculative batching.`,
    `- **Parallel, 4 independent targets** (${describe('parallel4')}): each lane behaves like a speculative queue of window C/k; failures only restart their own lane, so the queue as a whole gets close to k times a single lane.`,
  );
  const slowest = [...report.cost].sort((a, b) => b.medianMicros - a.medianMicros)[0];
  const tick = report.cost.find((c) => c.event === 'tick');
  if (slowest && tick) {
    out.push(
      `- **Engine cost**: with ${report.params.costPrs} PRs queued, even a tick that changes nothing costs ${Math.round(tick.medianMicros)} µs (median, ${tick.setup}); the dearest event measured is ${slowest.event} in ${slowest.setup} at ${Math.round(slowest.medianMicros)} µs median. step() copies the whole state (structuredClone) and reconciles from scratch on every event, so the cost grows with everything the state holds, not with what the event touches. The state also keeps every PR and every test run forever (the simulator prunes finished ones between events, which changes no decision: same results with pruning off, but without it one 6 h run at concurrency 25 and f = 5% ended with 599 runs and 1.1 MB of state, at 19 ms per event on average, in an earlier measurement on this machine).`,
    );
  }
  out.push(
    '- **Machine load**: the µs figures were taken while other benchmarks shared the 2 cores (see the load average), so medians are pessimistic and p99s are noisy; the throughput figures do not depend on the machine.',
    '',
    'Engine observations made while tracing the simulation (when this was written):',
    '',
    '- `nextWakeAt` returns a time in the past while batching waits on capacity: with concurrency 1, batch size 4, eight PRs submitted at t0 (PRs 1–4 start at once), a tick at t0 + 10 min leaves `nextWakeAt` at t0 + 5 min, and it stays there until the running batch ends. The runner ticks whenever `wake_at <= now`, so it would send a tick (a full step and state write) on every pass for up to T. Expected: only future wake times, or none while no run can start. The simulator only schedules ticks later than now.',
    "- Bisection proves only a passing segment that starts at the batch's first PR. Batch [8, 9, 10, 11] with 8 bad: [8, 9] fails, [10, 11] passes, [8] fails, [9] passes; 8 is ejected and 9, 10, 11 all go back to pending, although the run of [9] tested exactly the base 9 now merges onto. Marking 9 tests_passed would save one round of T per such bisection.",
  );
  return out;
}

function markdown(report: QueueBenchReport, date: string): string {
  const p = report.params;
  return [
    '# Merge-queue benchmark',
    '',
    'The pure merge-queue engine (`src/domain/queue`, `step(state, event, now)`) driven by a simulated CI and',
    'forge on simulated time (`bench/queue-sim.ts`, `bench/queue-ci.ts`). The forge builds test branches at once,',
    "lands merges at once and sends `tick` at the engine's `nextWakeAt`; CI runs last T·(1 ± jitter), fail if",
    'their test branch holds a bad PR (probability p per PR) and otherwise fail by flake with probability f per',
    'run. The queue is kept saturated (a fixed number of submitted PRs; a new one arrives when one leaves), so',
    "merged/h is the queue's capacity; it is compared with the closed forms of `mergequeue.md` §1c for the same",
    'parameters (q = p + f). Every figure is deterministic for a given seed; only the µs figures depend on the machine.',
    '',
    `- Command: \`${command()}\` (also part of \`npm run bench\` once wired in)`,
    `- Date: ${date}; whole merge-queue bench took ${report.seconds.toFixed(0)} s`,
    `- Machine: ${machine()}`,
    `- Parameters: T = ${p.durationMinutes} min ± ${pct(p.jitter)}, p = ${pct(p.failureRate)}, f ∈ {${p.flakeRates.map(pct).join(', ')}}, ${p.hours} h measured after ${p.warmupHours} h warm-up per seed, seeds from ${p.seed} until ≥ ${p.minMerged} merges (≤ ${p.maxReplications} seeds, no new seed after ${p.maxEvents} engine events); direct merge off; batching with bisection_skip_redundant_tests and bisectionConcurrency 2·C; backlog ⌈1.5·C·B⌉ + 4·k PRs.`,
    '',
    '## Results',
    '',
    formatQueueReport(report),
    '',
    '## Reading',
    '',
    ...reading(report),
    '',
  ].join('\n');
}

const FLAKE_HEADING = '## Flake protection';

/** The flake-protection section: from its heading to the end of the file. */
function flakeSection(report: FlakeBenchReport, date: string): string {
  return [
    FLAKE_HEADING,
    '',
    'The same simulation with a test-suite model (`bench/queue-flake.ts`): every failed run names the tests that',
    "failed, and the simulated server judges it as `src/app/queue/flake-judge.ts` does with the queue's",
    '`flakeProtection` (`judgeFailedRun`): only quarantined tests failed → the run passes; with `retry_flaky`, only',
    'FLAKY or quarantined tests failed and no retry spent for the PR head → `pr_restart_requested` (one rerun);',
    'otherwise a failure. The three settings run on the same seeds (same PR stream and CI dice until their',
    'decisions diverge); with `off`, each seed reproduces exactly the run of the same configuration and seed above.',
    '',
    `- Command: \`${command()}\` (\`BENCH_QUEUE_FLAKE=only\` runs just this part and rewrites this section; from code: \`runFlakeBench(options)\`, \`formatFlakeReport(report)\`)`,
    `- Date: ${date}; this part took ${report.seconds.toFixed(0)} s`,
    `- Parameters: ${describeFlakeParams(report)}`,
    '',
    formatFlakeReport(report).split('\n').slice(2).join('\n'),
    '',
    '### Reading',
    '',
    ...flakeReading(report),
    '',
  ].join('\n');
}

function outputFile(): string | null {
  const target = process.env.BENCH_QUEUE_DOCS;
  if (target === '0') return null;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  return target ? path.resolve(target) : path.join(root, 'docs', 'benchmarks-queue.md');
}

async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const flakeMode = process.env.BENCH_QUEUE_FLAKE ?? '1';
  const flakeOptions = { hours: envNumber('BENCH_QUEUE_HOURS'), seed: envNumber('BENCH_QUEUE_SEED'), log };
  const file = outputFile();
  if (flakeMode === 'only') {
    const flake = await runFlakeBench(flakeOptions);
    process.stdout.write(`${formatFlakeReport(flake)}\n`);
    if (file === null) return;
    const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const at = old.indexOf(`\n${FLAKE_HEADING}\n`);
    const kept = at >= 0 ? old.slice(0, at + 1) : old.length > 0 ? `${old.trimEnd()}\n\n` : '';
    writeFileSync(file, kept + flakeSection(flake, stamp()));
    process.stderr.write(`wrote ${file}\n`);
    return;
  }
  const report = await runQueueBench({
    hours: envNumber('BENCH_QUEUE_HOURS'),
    seed: envNumber('BENCH_QUEUE_SEED'),
    costPrs: envNumber('BENCH_QUEUE_COST_PRS'),
    costIterations: envNumber('BENCH_QUEUE_COST_ITERATIONS'),
    log,
  });
  const flake = flakeMode === '0' ? null : await runFlakeBench(flakeOptions);
  const date = stamp();
  process.stdout.write(`${formatQueueReport(report)}\n`);
  if (flake) process.stdout.write(`\n${formatFlakeReport(flake)}\n`);
  if (file === null) return;
  writeFileSync(file, markdown(report, date) + (flake ? `\n${flakeSection(flake, date)}` : ''));
  process.stderr.write(`wrote ${file}\n`);
}

function stamp(): string {
  return `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
