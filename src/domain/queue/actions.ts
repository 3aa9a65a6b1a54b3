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
  /** Merge the PR onto the target as its own commit, only if its head is still expectedHeadSha; answer with merge_succeeded or merge_failed. */
  | { type: 'merge_pr'; prNumber: number; method: MergeMethod; expectedHeadSha: string; direct: boolean }
  /** The PR's queue state changed: update its status check and, where worth it, its comment. */
  | {
      type: 'report_pr_state';
      prNumber: number;
      headSha: string;
      state: PrState;
      reason: string;
      runId: string | null;
    };
