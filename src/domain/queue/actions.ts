import type { MergeMethod, PrHead, PrState } from './types.ts';

/**
 * Requests the engine makes of the outside world. Each is idempotent, keyed by run id or PR number,
 * so a runner that crashed between persisting the state and acting can simply act again.
 */
export type QueueAction =
  /** Create testBranch at baseSha, merge prHeads in order, start CI (via a draft PR if asked); answer with test_branch_built or test_branch_failed. */
  | {
      type: 'create_test_run';
      runId: string;
      testBranch: string;
      baseSha: string;
      prHeads: PrHead[];
      testedPrs: number[];
      requiredStatuses: string[];
      createDraftPr: boolean;
    }
  /** Delete a test branch and close its draft PR; cancelCi when the run was still in flight. */
  | { type: 'delete_test_branch'; runId: string; testBranch: string; cancelCi: boolean }
  /**
   * Merge the PR onto the target as its own commit, only if its head is still expectedHeadSha and the
   * target is still at expectedTargetSha (the tip its passing run's history leads to, or, for a direct
   * merge, the tip it is based on): a merge onto anything else would land on a history it was never
   * tested on. Answer with merge_succeeded, or merge_failed (with targetMovedTo when the target moved).
   * expectedTargetSha is absent only in actions saved before it existed (the runner then reads the
   * state's targetHead, which cannot change while the merge is in flight).
   */
  | {
      type: 'merge_pr';
      prNumber: number;
      method: MergeMethod;
      expectedHeadSha: string;
      expectedTargetSha?: string;
      direct: boolean;
    }
  /** The PR's queue state changed: update its status check and, where worth it, its comment. */
  | {
      type: 'report_pr_state';
      prNumber: number;
      headSha: string;
      state: PrState;
      reason: string;
      runId: string | null;
    };
