/**
 * A small language for merge-queue scenarios. A Scenario drives the engine with events and plays a fake
 * forge: it builds test branches (or reports a scripted conflict) and merges PRs, recording the target
 * branch's history so tests can assert what a user would see.
 */
import { expect } from 'vitest';
import { deepFreeze } from '../../../src/app/queue/state-cache.ts';
import {
  createQueueState,
  getPrRecord,
  type PriorityName,
  type PrState,
  type QueueAction,
  type QueueEvent,
  type QueueSettings,
  type QueueState,
  queueStateFromJson,
  type SettingsPatch,
  step,
  type TestRun,
} from '../../../src/domain/queue/index.ts';

export const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
export const REQUIRED_CHECK = 'ci';

export interface ScenarioOptions {
  settings?: Partial<QueueSettings>;
  /** Answer merge_pr actions at once (default) or leave them for completeMerge / failMerge. */
  autoMerge?: boolean;
}

export interface SubmitOptions {
  priority?: number | PriorityName;
  noBatch?: boolean;
  /** Impacted targets uploaded for the PR's head (parallel mode). */
  targets?: string[] | 'ALL';
  /** Whether the forge says the PR may merge (reviews, its own checks). Default true. */
  mergeable?: boolean;
  /** Target commit the PR is based on; default: an old commit, so it is not up to date. */
  baseSha?: string;
  /** The required check on the PR's own head when it is submitted; default passed. */
  headCheck?: 'passed' | 'failed' | 'pending' | 'none';
}

type Action<T extends QueueAction['type']> = Extract<QueueAction, { type: T }>;

export class Scenario {
  state: QueueState;
  now = T0;
  /** Every action the engine asked for, in order. */
  readonly actions: QueueAction[] = [];
  /** PR numbers merged onto the target branch, in order: the branch history a user sees. */
  readonly merged: number[] = [];
  /** PRs whose merge into any test branch conflicts. */
  readonly conflicts = new Set<number>();
  /** PRs that break the build: a run containing one fails when CI is settled with settleCi(). */
  readonly bad = new Set<number>();
  readonly waitingMerges: Action<'merge_pr'>[] = [];
  private readonly heads = new Map<number, number>();
  private readonly autoMerge: boolean;
  private readonly inbox: QueueEvent[] = [];
  private targetCommits = 0;

  constructor(options: ScenarioOptions = {}) {
    this.autoMerge = options.autoMerge ?? true;
    const settings = { directMergeMode: 'off' as const, ...options.settings };
    this.state = createQueueState({ branch: 'main', targetHead: 'main-0', idSeed: 'run', settings });
    this.send({ type: 'required_statuses_discovered', branchProtection: [REQUIRED_CHECK] });
  }

  /** Feed an event to the engine (and the fake forge's answers after it); returns the actions asked for. */
  send(event: QueueEvent): QueueAction[] {
    this.inbox.push(event);
    const asked: QueueAction[] = [];
    for (let ev = this.inbox.shift(); ev; ev = this.inbox.shift()) {
      const before = JSON.stringify(this.state);
      const { state, actions } = step(deepFreeze(this.state), ev, this.now);
      if (JSON.stringify(this.state) !== before) throw new Error('step mutated its input');
      const reloaded = queueStateFromJson(JSON.stringify(state));
      expect(reloaded, 'state must survive a JSON round trip').toStrictEqual(state);
      this.state = reloaded;
      asked.push(...actions);
      this.actions.push(...actions);
      for (const a of actions) this.forge(a);
    }
    return asked;
  }

  private forge(a: QueueAction): void {
    if (a.type === 'create_test_run') {
      const conflict = a.prHeads.find((h) => this.conflicts.has(h.number));
      this.inbox.push(
        conflict
          ? {
              type: 'test_branch_failed',
              runId: a.runId,
              conflictPr: conflict.number,
              reason: 'conflicting files',
            }
          : { type: 'test_branch_built', runId: a.runId, sha: `sha-${a.runId}` },
      );
    }
    if (a.type === 'merge_pr') {
      if (this.autoMerge) this.inbox.push(this.landMerge(a.prNumber));
      else this.waitingMerges.push(a);
    }
  }

  private landMerge(prNumber: number): QueueEvent {
    this.merged.push(prNumber);
    this.targetCommits += 1;
    return { type: 'merge_succeeded', prNumber, newTargetSha: `main-${this.targetCommits}` };
  }

  head(n: number): string {
    return `pr${n}-v${this.heads.get(n) ?? 1}`;
  }

  submit(n: number, options: SubmitOptions = {}): QueueAction[] {
    const {
      priority,
      noBatch,
      targets,
      mergeable = true,
      baseSha = 'old-main',
      headCheck = 'passed',
    } = options;
    const pr = {
      number: n,
      title: `PR ${n}`,
      author: 'dev',
      headSha: this.head(n),
      baseSha,
      baseBranch: 'main',
    };
    const mergeability = mergeable ? ('mergeable' as const) : ('in_progress' as const);
    const checks = headCheck === 'none' ? [] : this.required().map((name) => ({ name, outcome: headCheck }));
    const asked = this.send({ type: 'pr_submitted', pr: { ...pr, mergeability }, priority, noBatch, checks });
    if (targets === undefined) return asked;
    return [
      ...asked,
      ...this.send({ type: 'impacted_targets_set', prNumber: n, headSha: pr.headSha, targets }),
    ];
  }

  submitAll(...prs: number[]): void {
    for (const n of prs) this.submit(n);
  }

  /** The run PR n currently waits on (testing, pending_failure) or that lets it merge (tests_passed). */
  runOf(n: number): TestRun {
    const e = getPrRecord(this.state, n);
    const id = e?.runId ?? e?.proofRunId;
    const run = id ? this.state.runs[id] : undefined;
    if (!run) throw new Error(`PR #${n} has no run (state ${e?.state})`);
    return run;
  }

  /** CI reports the required check for the run PR n is in. */
  pass(n: number): QueueAction[] {
    return this.report(this.runOf(n).id, 'passed');
  }

  fail(n: number): QueueAction[] {
    return this.report(this.runOf(n).id, 'failed');
  }

  report(runId: string, outcome: 'passed' | 'failed' | 'pending', name = REQUIRED_CHECK): QueueAction[] {
    return this.send({ type: 'ci_reported', runId, checks: [{ name, outcome }] });
  }

  /** Runs being built or tested now, oldest first. */
  activeRuns(): TestRun[] {
    return Object.values(this.state.runs).filter(
      (r) => r.status === 'building' || r.status === 'in_progress',
    );
  }

  /** One CI round: every run in progress finishes, failing if it contains a PR in `bad`. */
  settleCi(): TestRun[] {
    const runs = this.activeRuns();
    for (const r of runs) {
      const broken = r.prHeads.some((h) => this.bad.has(h.number));
      if (this.state.runs[r.id]?.status === 'in_progress') this.report(r.id, broken ? 'failed' : 'passed');
    }
    return runs;
  }

  tick(minutes: number): QueueAction[] {
    this.now += minutes * 60_000;
    return this.send({ type: 'tick' });
  }

  /** Someone pushes to the target branch outside the queue. */
  pushToTarget(sha: string): QueueAction[] {
    return this.send({ type: 'target_moved', sha });
  }

  /** New commits are pushed to PR n. */
  pushToPr(n: number): QueueAction[] {
    this.heads.set(n, (this.heads.get(n) ?? 1) + 1);
    return this.send({ type: 'pr_head_updated', prNumber: n, headSha: this.head(n) });
  }

  /** The required statuses in force now (queue setting, else config file, else branch protection). */
  required(): string[] {
    const r = this.state.requiredStatuses;
    return r.mergeInstance ?? r.serviceConfig ?? r.branchProtection ?? [];
  }

  /** CI reports the required check on PR n's head (or on another commit, given as sha). */
  headCi(n: number, outcome: 'passed' | 'failed' | 'pending', sha = this.head(n)): QueueAction[] {
    return this.send({
      type: 'pr_checks_reported',
      prNumber: n,
      headSha: sha,
      checks: [{ name: REQUIRED_CHECK, outcome }],
    });
  }

  cancel(n: number, reason = 'cancelled via API'): QueueAction[] {
    return this.send({ type: 'pr_cancelled', prNumber: n, reason });
  }

  update(patch: SettingsPatch): QueueAction[] {
    return this.send({ type: 'settings_updated', patch });
  }

  completeMerge(n: number): QueueAction[] {
    this.takeWaitingMerge(n);
    return this.send(this.landMerge(n));
  }

  failMerge(n: number, reason: string): QueueAction[] {
    this.takeWaitingMerge(n);
    return this.send({ type: 'merge_failed', prNumber: n, reason });
  }

  /** The forge refused PR n's merge because someone pushed sha to the target after the merge was asked. */
  targetMovedDuringMerge(n: number, sha: string): QueueAction[] {
    this.takeWaitingMerge(n);
    return this.send({
      type: 'merge_failed',
      prNumber: n,
      reason: `main moved to ${sha}`,
      targetMovedTo: sha,
    });
  }

  private takeWaitingMerge(n: number): void {
    const i = this.waitingMerges.findIndex((m) => m.prNumber === n);
    if (i < 0) throw new Error(`no merge of PR #${n} was asked for`);
    this.waitingMerges.splice(i, 1);
  }

  stateOf(n: number): PrState | undefined {
    return getPrRecord(this.state, n)?.state;
  }

  reasonOf(n: number): string {
    return getPrRecord(this.state, n)?.reason ?? '';
  }

  /** States of several PRs, for one readable assertion. */
  states(...prs: number[]): Record<number, PrState | undefined> {
    return Object.fromEntries(prs.map((n) => [n, this.stateOf(n)]));
  }

  /** What a run's test branch holds: the PRs merged for the predicted base, then the PRs it tests. */
  contents(run: TestRun): { base: string; ahead: number[]; tested: number[] } {
    return { base: run.baseSha, ahead: run.dependsOn, tested: run.tested };
  }

  /** Actions of one type asked for so far (or in a list returned by an interaction). */
  static of<T extends QueueAction['type']>(type: T, actions: QueueAction[]): Action<T>[] {
    return actions.filter((a): a is Action<T> => a.type === type);
  }

  asked<T extends QueueAction['type']>(type: T): Action<T>[] {
    return Scenario.of(type, this.actions);
  }
}
