/**
 * Data types of one merge queue's state. Everything here is plain JSON so it can be persisted as is,
 * except the PR map, an IntMap that JSON.stringify writes as a plain object (create.ts: queueStateFromJson
 * reads it back).
 */
import type { IntMap } from '../../lib/int-map.ts';

export type Mode = 'single' | 'parallel';
/** The queue state a user can ask for (updateQueue.state). */
export type RequestedState = 'running' | 'paused' | 'draining';
/** The queue state reported by the API: switching_modes is derived while a mode change waits. */
export type QueueStateName = RequestedState | 'switching_modes';
export type MergeMethod = 'merge_commit' | 'squash' | 'rebase';
export type DirectMergeMode = 'off' | 'always';
export type OptimizationMode = 'off' | 'bisection_skip_redundant_tests';
export type PrState =
  | 'not_ready'
  | 'pending'
  | 'testing'
  | 'tests_passed'
  | 'merged'
  | 'failed'
  | 'cancelled'
  | 'pending_failure';
/** The forge's view of whether the PR itself may merge (reviews, its own checks, no conflict). */
export type Mergeability = 'unspecified' | 'in_progress' | 'mergeable' | 'not_mergeable';
/** Impacted targets of one PR head: a list, or "ALL" (depends on everything). */
export type ImpactedTargets = string[] | 'ALL';
export type PriorityName = 'urgent' | 'high' | 'medium' | 'low';
export type RequiredStatusesSource = 'merge_instance' | 'service_config' | 'repo_provider_branch_protection';

export interface QueueSettings {
  mode: Mode;
  concurrency: number;
  bisectionConcurrency: number;
  testingTimeoutMinutes: number;
  canOptimisticallyMerge: boolean;
  pendingFailureDepth: number;
  batch: boolean;
  batchingMaxWaitTimeMinutes: number;
  batchingMinSize: number;
  /**
   * Largest batch (Trunk's target batch size, GitHub's maximum group size): with a long queue, batches
   * grow from batchingMinSize up to this to share the pending PRs among the free slots. Absent (states
   * saved before it existed) or not above batchingMinSize: batches hold batchingMinSize PRs.
   */
  batchingMaxSize?: number;
  createPrsForTestingBranches: boolean;
  commentsEnabled: boolean;
  commandsEnabled: boolean;
  statusCheckEnabled: boolean;
  directMergeMode: DirectMergeMode;
  optimizationMode: OptimizationMode;
  mergeMethod: MergeMethod;
  /** First segment of test branch names: `<prefix>/pr-<n>/<testRunId>`. */
  testBranchPrefix: string;
}

/** Required statuses from each source; null means "this source sets nothing". */
export interface RequiredStatusSources {
  mergeInstance: string[] | null;
  serviceConfig: string[] | null;
  branchProtection: string[] | null;
}

export interface StateChange {
  state: PrState;
  at: number;
  reason: string;
}

/** What the forge says about a PR when it is submitted. */
export interface PrSnapshot {
  number: number;
  title: string;
  author: string;
  headSha: string;
  /** Commit of the target branch the PR is based on (for direct merge). */
  baseSha: string;
  baseBranch: string;
  mergeability: Mergeability;
}

export interface PrEntry extends PrSnapshot {
  /** Submission id; a resubmission gets a new one. */
  id: string;
  priorityValue: number;
  priorityName: string;
  usedDefaultPriorityName: boolean;
  noBatch: boolean;
  impactedTargets: { sha: string; targets: ImpactedTargets } | null;
  state: PrState;
  stateChangedAt: number;
  reason: string;
  history: StateChange[];
  submittedAt: number;
  seq: number;
  /** Main run testing it (testing, pending_failure) or whose failure is being bisected. */
  runId: string | null;
  /** Passing run that allows it to merge (tests_passed). */
  proofRunId: string | null;
  /**
   * Latest result per check reported on the PR's current head (its own CI, not a test branch's):
   * readiness needs every required status passed here. Cleared when the head changes; absent in
   * states saved before readiness looked at it (nothing reported).
   */
  headChecks?: CheckResult[];
  /**
   * A bisection segment holding it passed on the target branch (bisect.ts: segmentFinished): not known
   * to be bad, so it is taken into the next batch ahead of fresh PRs without counting towards the batch
   * size. A scheduling hint only: it proves nothing (only a main run does). Absent otherwise.
   */
  cleared?: true;
}

/** building is internal (API: in_progress): the test branch is being assembled. */
export type RunStatus = 'building' | 'in_progress' | 'succeeded' | 'failed' | 'cancelled';
export type FailureKind = 'checks_failed' | 'timed_out' | 'conflict' | 'build_error' | 'superseded';

export interface RunFailure {
  kind: FailureKind;
  reason: string;
  /** PR whose merge into the test branch conflicted. */
  conflictPr: number | null;
}

export type CheckOutcome = 'pending' | 'passed' | 'failed';
export interface CheckResult {
  name: string;
  outcome: CheckOutcome;
  url: string | null;
  /**
   * The forge said `error`, not `failure`: both fail the check, but the API reports them apart
   * (statusChecks state ERROR vs FAILURE). Absent otherwise, and in states saved before it existed.
   */
  errored?: true;
}

export interface PrHead {
  number: number;
  sha: string;
}

export interface TestRun {
  id: string;
  /**
   * main: a run of the line, which proves what it tests. bisection: a segment of a failed batch, tested
   * on the target branch alone (no dependsOn) off the line; evidence for ejection only, it proves nothing.
   */
  kind: 'main' | 'bisection';
  /** For bisection runs: the failed batch run being bisected. */
  parentRunId: string | null;
  tested: number[];
  /** PRs merged into the test branch to form the predicted base, in order (API dependentPrs). */
  dependsOn: number[];
  prHeads: PrHead[];
  baseSha: string;
  testBranch: string;
  testBranchSha: string | null;
  requiredStatuses: string[];
  requiredStatusesSource: RequiredStatusesSource;
  impactedTargets: string[] | null;
  impactedTargetsForTestedPrs: string[] | null;
  createdAt: number;
  deadline: number;
  status: RunStatus;
  failure: RunFailure | null;
  checks: CheckResult[];
  branchDeleted: boolean;
}

export type BisectNodeStatus = 'blocked' | 'waiting' | 'running' | 'passed' | 'failed';
export interface BisectNode {
  prs: number[];
  /** Index of the node this one was split from. */
  parent: number | null;
  status: BisectNodeStatus;
  runId: string | null;
  /** Result deduced without a run (bisection_skip_redundant_tests). */
  inferred: boolean;
  split: boolean;
  /**
   * PRs its segment is tested on top of, on the target branch (optimizationMode off: a right half goes
   * on top of its left sibling once that passed, and halves inherit it). Absent: the target branch alone.
   */
  on?: number[];
}

export interface Bisection {
  parentRunId: string;
  nodes: BisectNode[];
}

export interface MergeInFlight {
  prNumber: number;
  direct: boolean;
}

/** One entry of the target branch's history since the last move from outside the queue. */
export interface LineageEntry {
  sha: string;
  /** PR whose merge produced this commit; null for the head seen at creation or after an outside push. */
  prNumber: number | null;
}

export interface QueueState {
  version: 1;
  branch: string;
  settings: QueueSettings;
  requested: RequestedState;
  /** Mode waiting for in-flight PRs to finish (API state switching_modes). */
  pendingMode: Mode | null;
  requiredStatuses: RequiredStatusSources;
  targetHead: string;
  lineage: LineageEntry[];
  /** Target push seen while our merge was in flight; judged when the merge result arrives. */
  deferredTargetSha: string | null;
  idSeed: string;
  nextSeq: number;
  /** PR entries by number (a plain object with integer keys in the stored JSON: IntMap.toJSON). */
  prs: IntMap<PrEntry>;
  /** Admitted PRs (pending or later, not terminal) in queue order. */
  order: number[];
  runs: Record<string, TestRun>;
  bisections: Bisection[];
  merging: MergeInFlight | null;
}
