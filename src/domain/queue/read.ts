import type { QueueAction } from './actions.ts';
import { findPr, isActive, pr } from './context.ts';
import { comparePriority } from './graph.ts';
import type { CheckResult, PrEntry, QueueState, QueueStateName, RequiredStatusesSource } from './types.ts';

/**
 * The queue state as the API reports it: the state last requested, except that a running queue whose
 * mode change waits for PRs in flight is switching_modes (it admits nothing meanwhile). A paused or
 * draining queue says so even with a switch waiting (pendingMode shows the switch).
 */
export function queueStateName(s: QueueState): QueueStateName {
  return s.requested === 'running' && s.pendingMode !== null ? 'switching_modes' : s.requested;
}

/** PRs currently submitted: admitted ones in queue order, then not_ready ones by priority. */
export function listQueuedPrs(s: QueueState): PrEntry[] {
  const waiting = s.prs
    .values()
    .filter((e) => e.state === 'not_ready')
    .sort(comparePriority);
  return [...s.order.map((n) => pr(s, n)), ...waiting];
}

/** The latest submission of a PR (also after it merged, failed or was cancelled). */
export function getPrRecord(s: QueueState, prNumber: number): PrEntry | undefined {
  return findPr(s, prNumber);
}

/** What getMergeQueueTestingDetails needs about one run (URLs and ISO dates are the API's job). */
export interface TestingDetails {
  testRunId: string;
  kind: 'main' | 'bisection';
  testBranch: string;
  testBranchSha: string | null;
  requiredStatuses: string[];
  requiredStatusesSource: RequiredStatusesSource;
  testedPullRequests: { prNumber: number; title: string }[];
  dependentPrs: number[];
  baseSha: string;
  status: 'in_progress' | 'succeeded' | 'failed' | 'cancelled';
  failureReason: string | null;
  createdAt: number;
  impactedTargets: string[] | null;
  impactedTargetsForTestedPrs: string[] | null;
  checks: CheckResult[];
}

export function getTestingDetails(s: QueueState, runId: string): TestingDetails | undefined {
  const run = s.runs[runId];
  if (!run) return undefined;
  return {
    testRunId: run.id,
    kind: run.kind,
    testBranch: run.testBranch,
    testBranchSha: run.testBranchSha,
    requiredStatuses: [...run.requiredStatuses],
    requiredStatusesSource: run.requiredStatusesSource,
    testedPullRequests: run.tested.map((n) => ({ prNumber: n, title: findPr(s, n)?.title ?? '' })),
    dependentPrs: [...run.dependsOn],
    baseSha: run.baseSha,
    status: run.status === 'building' ? 'in_progress' : run.status,
    failureReason: run.failure?.reason ?? null,
    createdAt: run.createdAt,
    impactedTargets: run.impactedTargets,
    impactedTargetsForTestedPrs: run.impactedTargetsForTestedPrs,
    checks: run.checks.map((c) => ({ ...c })),
  };
}

/** When the runner should next send a tick: the earliest run deadline or batching wait, if any. */
export function nextWakeAt(s: QueueState): number | null {
  const deadlines = Object.values(s.runs)
    .filter(isActive)
    .map((r) => r.deadline);
  const batchWait = s.settings.batchingMaxWaitTimeMinutes * 60_000;
  const batching = s.settings.batch
    ? s.order
        .map((n) => pr(s, n))
        .flatMap((e) => (e.state === 'pending' ? [e.stateChangedAt + batchWait] : []))
    : [];
  const all = [...deadlines, ...batching];
  return all.length > 0 ? Math.min(...all) : null;
}

/**
 * Requests that may not have been carried out if the runner stopped after saving the state:
 * test branches still being built and the merge in flight. All are safe to repeat.
 */
export function outstandingActions(s: QueueState): QueueAction[] {
  const builds: QueueAction[] = Object.values(s.runs)
    .filter((r) => r.status === 'building')
    .map((r) => ({
      type: 'create_test_run',
      runId: r.id,
      testBranch: r.testBranch,
      baseSha: r.baseSha,
      prHeads: r.prHeads,
      testedPrs: r.tested,
      requiredStatuses: r.requiredStatuses,
      createDraftPr: s.settings.createPrsForTestingBranches,
    }));
  const merge = s.merging;
  const e = merge ? findPr(s, merge.prNumber) : undefined;
  if (!merge || !e) return builds;
  const method = s.settings.mergeMethod;
  return [
    ...builds,
    {
      type: 'merge_pr',
      prNumber: e.number,
      method,
      expectedHeadSha: e.headSha,
      // targetHead does not move while a merge is in flight (pushes meanwhile are deferred), so it is
      // still the tip the merge was decided on.
      expectedTargetSha: s.targetHead,
      direct: merge.direct,
    },
  ];
}
