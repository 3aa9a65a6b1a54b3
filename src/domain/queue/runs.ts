import { addRun, type Ctx, nextId, pr } from './context.ts';
import type { CheckReport, VerdictOverride } from './events.ts';
import type {
  CheckResult,
  ImpactedTargets,
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

/** Union of impacted targets of some PRs (`prs`, then `more`), or null if none of them uploaded any. */
function targetsOf(s: QueueState, prs: readonly number[], more: readonly number[] = []): string[] | null {
  const lists: ImpactedTargets[] = [];
  for (const list of [prs, more]) {
    for (const n of list) {
      const t = pr(s, n).impactedTargets;
      if (t !== null) lists.push(t.targets);
    }
  }
  if (lists.length === 0) return null;
  if (lists.includes('ALL')) return ['ALL'];
  const names = new Set<string>();
  for (const l of lists) for (const name of l) names.add(name);
  return [...names].sort();
}

export interface NewRun {
  kind: TestRun['kind'];
  tested: number[];
  dependsOn: number[];
  parentRunId: string | null;
}

/** The heads of the PRs a test branch merges, in order: what it depends on, then what it tests. */
function headsOf(s: QueueState, deps: readonly number[], tested: readonly number[]): PrHead[] {
  const heads: PrHead[] = [];
  for (const n of deps) heads.push({ number: n, sha: pr(s, n).headSha });
  for (const n of tested) heads.push({ number: n, sha: pr(s, n).headSha });
  return heads;
}

/** Record a new test run on the predicted base and ask for its test branch. */
export function createRun(ctx: Ctx, spec: NewRun): TestRun {
  const { s, now } = ctx;
  const id = nextId(s);
  const first = spec.tested[0] ?? 0;
  const required = resolveRequired(s);
  const run: TestRun = {
    id,
    kind: spec.kind,
    parentRunId: spec.parentRunId,
    tested: [...spec.tested],
    dependsOn: [...spec.dependsOn],
    prHeads: headsOf(s, spec.dependsOn, spec.tested),
    baseSha: s.targetHead,
    testBranch: `${s.settings.testBranchPrefix}/pr-${first}/${id}`,
    testBranchSha: null,
    requiredStatuses: required.statuses,
    requiredStatusesSource: required.source,
    impactedTargets: targetsOf(s, spec.dependsOn, spec.tested),
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
