import type { Queryable } from '../../db/bulk.ts';
import { runsAtCommitOrBranch } from '../../store/queue/queues.ts';

/** A merge-queue test run an upload belongs to. */
export interface RunLink {
  readonly queueId: string;
  readonly runId: string;
  readonly testBranch: string;
}

/**
 * The test runs whose results an upload carries: runs whose test branch is at the upload's commit, or
 * whose test branch is the upload's branch. (Results for a test branch count as merge-queue runs for
 * the health monitors: they are stored on the test branch's name.) One statement on the live runs' rows.
 */
export async function runsForUpload(
  db: Queryable,
  repoId: string,
  commitSha: string,
  branch: string,
): Promise<RunLink[]> {
  const rows = await runsAtCommitOrBranch(db, repoId, commitSha.toLowerCase(), branch);
  return rows.map((r) => ({ queueId: r.queue_id, runId: r.id, testBranch: r.test_branch }));
}
