/**
 * Seeded random event sequences for the engine's differential test (differential.test.ts): a small
 * world that answers the engine's actions (branches built, CI reports, merges) and picks boundary
 * events on purpose (the first and last PR of the order, an empty queue, batches of min and max size,
 * mode switches). The engine is a parameter, so the same sequences ran through the engine at the
 * commit the recorded digests come from (fixtures/engine-digests.json) and through the current one.
 */
import { createHash } from 'node:crypto';
import { mulberry32 } from '../../../bench/queue-ci.ts';
import { deepFreeze } from '../../../src/app/queue/state-cache.ts';
import type {
  CreateQueueInput,
  Pruned,
  QueueAction,
  QueueEvent,
  QueueSettings,
  QueueState,
  StepResult,
} from '../../../src/domain/queue/index.ts';

export interface Engine {
  step(state: QueueState, event: QueueEvent, now: number): StepResult;
  pruneHistory(state: QueueState): Pruned;
  createQueueState(input: CreateQueueInput): QueueState;
}

export interface SequenceDigest {
  seed: number;
  steps: number;
  digest: string;
}

const T0 = Date.UTC(2025, 0, 6, 9);
const MINUTE = 60_000;
const TARGETS = [['a'], ['b'], ['a', 'b'], 'ALL'] as const;

/**
 * One sequence: `steps` events chosen by `seed`, each stepped, pruned when `prune`, and digested
 * (state, actions and what pruning took out, as JSON, chained): equal digests mean equal behaviour.
 */
export function runSequence(engine: Engine, seed: number, steps: number, prune: boolean): SequenceDigest {
  const r = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const prCount = 1 + Math.floor(r() * 8);
  const modeRoll = r();
  const settings: Partial<QueueSettings> = {
    mode: modeRoll < 0.25 ? 'parallel' : 'single',
    concurrency: 1 + Math.floor(r() * 4),
    batch: modeRoll >= 0.5,
    batchingMinSize: 1 + Math.floor(r() * 4),
    batchingMaxWaitTimeMinutes: pick([0, 5]),
    canOptimisticallyMerge: r() < 0.3,
    pendingFailureDepth: pick([0, 0, 1, 2]),
    optimizationMode: r() < 0.5 ? 'bisection_skip_redundant_tests' : 'off',
    bisectionConcurrency: 1 + Math.floor(r() * 4),
    directMergeMode: r() < 0.1 ? 'always' : 'off',
  };
  if (r() < 0.3) settings.batchingMaxSize = (settings.batchingMinSize ?? 1) + Math.floor(r() * 3);
  let state = engine.createQueueState({ branch: 'main', targetHead: 'main-0', idSeed: 'q', settings });
  let now = T0;
  let hash = createHash('sha256');
  const version = new Map<number, number>();
  const pendingBuilds: string[] = [];
  const built: string[] = [];
  // (Set by send, from a merge_pr action.)
  let merging = null as number | null;
  let targetSeq = 0;
  let last = '';
  const send = (event: QueueEvent) => {
    deepFreeze(state);
    const out = engine.step(state, deepFreeze(event), now);
    const pruned = prune ? engine.pruneHistory(out.state) : { state: out.state, prs: [], runs: [] };
    state = pruned.state;
    hash.update(JSON.stringify([event, out.actions, state, pruned.prs, pruned.runs]));
    last = hash.copy().digest('hex');
    hash = createHash('sha256').update(last);
    for (const a of out.actions as QueueAction[]) {
      if (a.type === 'create_test_run') pendingBuilds.push(a.runId);
      if (a.type === 'merge_pr') merging = a.prNumber;
    }
  };
  const head = (n: number) => `pr${n}-v${version.get(n) ?? 0}`;
  send({ type: 'required_statuses_discovered', branchProtection: ['ci'] });
  for (let i = 0; i < steps; i += 1) {
    now += Math.floor(r() * 3 * MINUTE);
    const order = state.order;
    const target = (): number =>
      order.length === 0
        ? 1 + Math.floor(r() * prCount)
        : (pick([order[0], order[order.length - 1], pick(order)]) as number);
    let roll = r();
    // An event whose precondition does not hold (nothing to build, report or merge) is a submission.
    if (roll >= 0.2 && roll < 0.38 && pendingBuilds.length === 0) roll = 0;
    if (roll >= 0.38 && roll < 0.62 && built.length === 0) roll = 0;
    if (roll >= 0.62 && roll < 0.72 && merging === null) roll = 0;
    if (roll < 0.2) {
      const free: number[] = [];
      for (let n = 1; n <= prCount; n += 1) {
        const e = state.prs.get(n);
        if (e === undefined || e.state === 'merged' || e.state === 'failed' || e.state === 'cancelled')
          free.push(n);
      }
      if (free.length === 0) {
        send({ type: 'tick' });
        continue;
      }
      const n = pick(free);
      send({
        type: 'pr_submitted',
        pr: {
          number: n,
          title: `PR ${n}`,
          author: 'dev',
          headSha: head(n),
          baseSha: 'main-0',
          baseBranch: 'main',
          mergeability: r() < 0.9 ? 'mergeable' : 'in_progress',
        },
        priority: r() < 0.1 ? 'urgent' : null,
        noBatch: r() < 0.1 ? true : undefined,
        checks: [{ name: 'ci', outcome: r() < 0.8 ? 'passed' : 'pending' }],
      });
      if (state.settings.mode === 'parallel')
        send({
          type: 'impacted_targets_set',
          prNumber: n,
          headSha: head(n),
          targets: pick(TARGETS) as never,
        });
    } else if (roll < 0.38) {
      const runId = pendingBuilds.splice(Math.floor(r() * pendingBuilds.length), 1)[0] as string;
      if (r() < 0.05)
        send({ type: 'test_branch_failed', runId, conflictPr: order[0] ?? null, reason: 'conflict' });
      else {
        built.push(runId);
        send({ type: 'test_branch_built', runId, sha: `sha-${runId}` });
      }
    } else if (roll < 0.62) {
      // Mostly the oldest runs (the head of the line), sometimes any, sometimes one already superseded.
      const at = r() < 0.6 ? 0 : Math.floor(r() * built.length);
      const runId = built.splice(at, 1)[0] as string;
      const outcome = r() < 0.65 ? 'passed' : r() < 0.85 ? 'failed' : 'pending';
      if (outcome === 'pending') built.push(runId);
      send({ type: 'ci_reported', runId, checks: [{ name: 'ci', outcome }] });
    } else if (roll < 0.72) {
      const n = merging as number;
      merging = null;
      if (r() < 0.9) {
        targetSeq += 1;
        send({ type: 'merge_succeeded', prNumber: n, newTargetSha: `main-m${targetSeq}` });
      } else send({ type: 'merge_failed', prNumber: n, reason: 'conflict' });
    } else if (roll < 0.75) {
      send({ type: 'pr_cancelled', prNumber: target(), reason: 'cancelled' });
    } else if (roll < 0.79) {
      const n = target();
      version.set(n, (version.get(n) ?? 0) + 1);
      send({ type: 'pr_head_updated', prNumber: n, headSha: head(n) });
    } else if (roll < 0.82) {
      send({ type: 'pr_restart_requested', prNumber: target() });
    } else if (roll < 0.85) {
      targetSeq += 1;
      send({ type: 'target_moved', sha: `main-o${targetSeq}` });
    } else if (roll < 0.87) {
      send({
        type: 'pr_readiness_changed',
        prNumber: target(),
        mergeability: r() < 0.5 ? 'not_mergeable' : 'mergeable',
      });
    } else if (roll < 0.89) {
      const n = target();
      const outcome = pick(['passed', 'failed'] as const);
      send({ type: 'pr_checks_reported', prNumber: n, headSha: head(n), checks: [{ name: 'ci', outcome }] });
    } else if (roll < 0.915) {
      const patch = pick([
        { mode: state.settings.mode === 'single' ? 'parallel' : 'single' },
        { batch: !state.settings.batch },
        { concurrency: 1 + Math.floor(r() * 4) },
        { batchingMinSize: 1 + Math.floor(r() * 4) },
        { state: pick(['running', 'paused', 'draining'] as const) },
        { state: 'running' as const },
      ] as const);
      send({ type: 'settings_updated', patch: patch as never });
    } else if (roll < 0.94 && state.settings.mode === 'parallel') {
      const n = target();
      send({ type: 'impacted_targets_set', prNumber: n, headSha: head(n), targets: pick(TARGETS) as never });
    } else {
      now += Math.floor(r() * 400 * MINUTE);
      send({ type: 'tick' });
    }
  }
  return { seed, steps: steps + 1, digest: last };
}
