import type {
  CheckOutcome,
  DirectMergeMode,
  ImpactedTargets,
  Mergeability,
  MergeMethod,
  Mode,
  OptimizationMode,
  PriorityName,
  PrSnapshot,
  RequestedState,
} from './types.ts';

export type { PrSnapshot };

/** Latest result of one check (check run or commit status) on a test branch. */
export interface CheckReport {
  name: string;
  outcome: CheckOutcome;
  url?: string;
  /** The forge's state was `error` (outcome failed): kept so reads can say ERROR, not FAILURE. */
  errored?: true;
}

/** A judgement that replaces the one computed from required statuses (room for flake-aware verdicts). */
export interface VerdictOverride {
  status: 'succeeded' | 'failed';
  reason: string;
}

/** updateQueue fields; anything left out stays unchanged. */
export interface SettingsPatch {
  state?: RequestedState;
  mode?: Mode;
  concurrency?: number;
  bisectionConcurrency?: number;
  testingTimeoutMinutes?: number;
  canOptimisticallyMerge?: boolean;
  pendingFailureDepth?: number;
  batch?: boolean;
  batchingMaxWaitTimeMinutes?: number;
  batchingMinSize?: number;
  batchingMaxSize?: number;
  createPrsForTestingBranches?: boolean;
  commentsEnabled?: boolean;
  commandsEnabled?: boolean;
  statusCheckEnabled?: boolean;
  directMergeMode?: DirectMergeMode;
  optimizationMode?: OptimizationMode;
  mergeMethod?: MergeMethod;
  testBranchPrefix?: string;
  requiredStatuses?: string[];
  deleteRequiredStatuses?: boolean;
}

export type QueueEvent =
  /** A PR was submitted (API, command, checkbox), or resubmitted after it failed or was cancelled. */
  | {
      type: 'pr_submitted';
      pr: PrSnapshot;
      priority?: number | PriorityName | null;
      noBatch?: boolean;
      /** Checks already reported on the PR's head (stored commit statuses), for its readiness. */
      checks?: CheckReport[];
    }
  /** CI reported checks on a PR's head commit; ignored unless headSha is the PR's current head. */
  | { type: 'pr_checks_reported'; prNumber: number; headSha: string; checks: CheckReport[] }
  /** The forge re-evaluated a submitted PR (mergeability, base branch or base commit changed). */
  | {
      type: 'pr_readiness_changed';
      prNumber: number;
      mergeability?: Mergeability;
      baseBranch?: string;
      baseSha?: string;
    }
  /** New commits were pushed to the PR's head branch. */
  | { type: 'pr_head_updated'; prNumber: number; headSha: string }
  /** The PR leaves the queue: API or command cancel, PR closed; reason is shown to the user. */
  | { type: 'pr_cancelled'; prNumber: number; reason: string }
  /** Impacted targets were uploaded for one head of the PR (parallel mode). */
  | { type: 'impacted_targets_set'; prNumber: number; headSha: string; targets: ImpactedTargets }
  /** restartTestsOnPullRequest: test the PR (and its group) again. */
  | { type: 'pr_restart_requested'; prNumber: number }
  /** The test branch of a run was assembled; CI now runs on sha. */
  | { type: 'test_branch_built'; runId: string; sha: string }
  /** Assembling the test branch failed: a conflict merging conflictPr, or another forge error. */
  | { type: 'test_branch_failed'; runId: string; conflictPr: number | null; reason: string }
  /** CI results on a run's test branch (latest per check); verdict, when given, decides the run. */
  | { type: 'ci_reported'; runId: string; checks: CheckReport[]; verdict?: VerdictOverride }
  /** A merge_pr action succeeded; the target branch is now at newTargetSha. */
  | { type: 'merge_succeeded'; prNumber: number; newTargetSha: string }
  /**
   * A merge_pr action was refused (conflict, head changed, permissions). targetMovedTo: refused only
   * because the target branch is no longer at the expected tip but at this commit (a push from
   * outside): not the PR's fault, it is tested again on that tip.
   */
  | { type: 'merge_failed'; prNumber: number; reason: string; targetMovedTo?: string }
  /** The target branch head is now sha (our own merges are recognised and ignored). */
  | { type: 'target_moved'; sha: string }
  /** Time passed: timeouts and batching waits are evaluated at `now`. */
  | { type: 'tick' }
  /** updateQueue: settings and/or requested state changed. */
  | { type: 'settings_updated'; patch: SettingsPatch }
  /** Required statuses read from the repository config file or branch protection (null: none). */
  | {
      type: 'required_statuses_discovered';
      serviceConfig?: string[] | null;
      branchProtection?: string[] | null;
    };
