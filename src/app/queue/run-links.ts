import type { Queryable } from '../../store/db.ts';
import { listQueues } from '../../store/queues.ts';
import { loadState } from './apply.ts';

/** A merge-queue test run an upload belongs to. */
export interface RunLink {
  readonly queueId: string;
  readonly runId: string;
  readonly testBranch: string;
}

/**
 * The test runs whose results an upload carries: runs whose test branch is at the upload's commit, or
 * whose test branch is the upload's branch. (Results for a test branch count as merge-queue runs for
 * the health monitors: they are stored on the test branch's name.)
 */
export async function runsForUpload(
  db: Queryable,
  repoId: string,
  commitSha: string,
  branch: string,
): Promise<RunLink[]> {
  const sha = commitSha.toLowerCase();
  const links: RunLink[] = [];
  for (const row of await listQueues(db, [repoId])) {
    for (const run of Object.values(loadState(row).state.runs)) {
      if (run.testBranchSha === sha || run.testBranch === branch)
        links.push({ queueId: row.id, runId: run.id, testBranch: run.testBranch });
    }
  }
  return links;
}
