import { addRun, type Ctx, nextId, pr } from './context.ts';
import type { CheckReport, VerdictOverride } from './events.ts';
import type {
  CheckResult,
  PrHead,
  QueueState,
  RequiredStatusesSource,
  RunFailure,
  TestRun,
} from './types.ts';

/** Required statuses in force now, by precedence: queue setting, repository config file, branch protection. */
export function resolveRequired(s: QueueState): { statuses: string[]; source: RequiredStatusesSource } {
  const r = s.requiredStatuses;
  if (r.mergeInstance !== null) return { statuses: [...r.mergeInstance], source: 'merge_instance' };
  if (r.serviceConfig !== null) return { statuses: [...r.serviceConfig], source: 'service_config' };
  return { statuses: [...(r.branchProtection ?? [])], source: 'repo_provider_branch_protection' };
}

/**
 * What targetsOf needs of some PRs' impacted targets: whether any uploaded some, whether one of them is
 * "ALL", and the union of the named ones (the answer does not depend on the PRs' order).
 */
interface TargetUnion {
  any: boolean;
  all: boolean;
  names: Set<string>;
}

function addTargets(s: QueueState, u: TargetUnion, prs: readonly number[], from = 0): void {
  for (let i = from; i < prs.length; i += 1) {
    const t = pr(s, prs[i] as number).impactedTargets;
    if (t === null) continue;
    u.any = true;
    if (t.targets === 'ALL') u.all = true;
    else for (const name of t.targets) u.names.add(name);
  }
}

/** Union of impacted targets of some PRs (`prs`, then `more`), or null if none of them uploaded any. */
function targetsOf(
  s: QueueState,
  prs: readonly number[],
  more: readonly number[] = [],
  known?: TargetUnion,
): string[] | null {
  // (Known PRs without targets add nothing; "ALL" among them is the answer whatever the others are.)
  if (known !== undefined && !known.any) return targetsOf(s, more);
  if (known?.all === true) return ['ALL'];
  const u: TargetUnion = known
    ? { any: known.any, all: known.all, names: new Set(known.names) }
    : { any: false, all: false, names: new Set() };
  if (!known) addTargets(s, u, prs);
  addTargets(s, u, more);
  if (!u.any) return null;
  if (u.all) return ['ALL'];
  return [...u.names].sort();
}

/**
 * The heads and targets of a run's dependsOn, kept for the next run: startRuns passes the same list of
 * the PRs ahead to each run it starts, only longer (pushed onto), so each run adds only the PRs the
 * last one did not have. Heads and targets change only in the event's handler, never in reconcile.
 */
export interface DepsMemo {
  deps: readonly number[];
  length: number;
  heads: PrHead[];
  targets: TargetUnion;
}

function depsMemo(ctx: Ctx, deps: readonly number[]): DepsMemo {
  let memo = ctx.depsMemo;
  if (memo === null || memo.deps !== deps || memo.length > deps.length) {
    memo = { deps, length: 0, heads: [], targets: { any: false, all: false, names: new Set() } };
    ctx.depsMemo = memo;
  }
  const { s } = ctx;
  for (let i = memo.length; i < deps.length; i += 1) {
    const n = deps[i] as number;
    memo.heads.push({ number: n, sha: pr(s, n).headSha });
  }
  addTargets(s, memo.targets, deps, memo.length);
  memo.length = deps.length;
  return memo;
}

export interface NewRun {
  kind: TestRun['kind'];
  tested: number[];
  dependsOn: number[];
  parentRunId: string | null;
}

/**
 * The heads of the PRs a test branch merges, in order: what it depends on (the memo's, whose head
 * objects runs share: nothing writes one), then what it tests.
 */
function headsOf(s: QueueState, memo: DepsMemo, tested: readonly number[]): PrHead[] {
  const heads = memo.heads.slice();
  for (const n of tested) heads.push({ number: n, sha: pr(s, n).headSha });
  return heads;
}

/** Record a new test run on the predicted base and ask for its test branch. */
export function createRun(ctx: Ctx, spec: NewRun): TestRun {
  const { s, now } = ctx;
  const id = nextId(s);
  const first = spec.tested[0] ?? 0;
  const required = resolveRequired(s);
  const memo = depsMemo(ctx, spec.dependsOn);
  const run: TestRun = {
    id,
    kind: spec.kind,
    parentRunId: spec.parentRunId,
    tested: [...spec.tested],
    dependsOn: [...spec.dependsOn],
    prHeads: headsOf(s, memo, spec.tested),
    baseSha: s.targetHead,
    testBranch: `${s.settings.testBranchPrefix}/pr-${first}/${id}`,
    testBranchSha: null,
    requiredStatuses: required.statuses,
    requiredStatusesSource: required.source,
    impactedTargets: targetsOf(s, spec.dependsOn, spec.tested, memo.targets),
    impactedTargetsForTestedPrs: targetsOf(s, spec.tested),
    createdAt: now,
    deadline: now + s.settings.testingTimeoutMinutes * 60_000,
    status: 'building',
    failure: null,
    checks: [],
    branchDeleted: false,
  };
  addRun(ctx, run);
  ctx.actions.push({
    type: 'create_test_run',
    runId: id,
    testBranch: run.testBranch,
    baseSha: run.baseSha,
    prHeads: run.prHeads,
    testedPrs: run.tested,
    requiredStatuses: run.requiredStatuses,
    createDraftPr: s.settings.createPrsForTestingBranches,
  });
  return run;
}

/** Merge newly reported checks into a list (latest result per name wins). */
export function mergeChecks(checks: CheckResult[], reports: readonly CheckReport[]): void {
  for (const r of reports) {
    const check: CheckResult = {
      name: r.name,
      outcome: r.outcome,
      url: r.url ?? null,
      ...(r.errored === true ? { errored: true as const } : {}),
    };
    const i = checks.findIndex((c) => c.name === r.name);
    if (i >= 0) checks[i] = check;
    else checks.push(check);
  }
}

/**
 * The run's verdict from its checks: failed if a required status failed, succeeded once all passed.
 * A run without required statuses (only in states saved before the queue refused to test without
 * them) never succeeds by its checks: a check that happened to report is no proof of anything.
 */
export function judgeChecks(run: TestRun, verdict?: VerdictOverride): 'succeeded' | RunFailure | null {
  if (verdict?.status === 'succeeded') return 'succeeded';
  if (verdict?.status === 'failed')
    return { kind: 'checks_failed', reason: verdict.reason, conflictPr: null };
  const names = run.requiredStatuses;
  const outcome = (name: string) => run.checks.find((c) => c.name === name)?.outcome ?? 'pending';
  const failed = names.filter((n) => outcome(n) === 'failed');
  if (failed.length > 0) {
    return {
      kind: 'checks_failed',
      reason: `required checks failed: ${failed.join(', ')}`,
      conflictPr: null,
    };
  }
  return names.length > 0 && names.every((n) => outcome(n) === 'passed') ? 'succeeded' : null;
}

/** Required statuses of a run that have not passed yet (for timeout reasons). */
export function missingChecks(run: TestRun): string[] {
  return run.requiredStatuses.filter((n) => run.checks.find((c) => c.name === n)?.outcome !== 'passed');
}
