import type { PrHead } from '../../domain/queue/types.ts';
import type { GitContext } from './git.ts';
import { assertSha, branchRef } from './names.ts';
import { commitInfo, commitTree, describeFailure, isAncestor, mergeTrees, rawDate } from './objects.ts';
import { forceBranch, peel } from './repos.ts';

export interface TestBranchSpec {
  /** Branch to create or overwrite, e.g. trunk-merge/pr-12/<uuid>. */
  testBranch: string;
  /** Target branch commit the run starts from. */
  baseSha: string;
  /** PR heads merged in this order on top of baseSha. */
  prHeads: readonly PrHead[];
  /** Subject prefix of each merge commit (default "Merge pull request"); " #<n> into <testBranch>" is appended. */
  message?: string;
}

/** Outcome of assembling a test branch. */
export type TestBranchResult =
  /** The branch now points at sha, which contains baseSha and every PR head. */
  | { ok: true; sha: string }
  /** Nothing was written to the branch; conflictPr is the PR whose merge failed (null: not attributable to one PR). */
  | { ok: false; conflictPr: number | null; reason: string };

/**
 * Build the test branch: starting at baseSha, merge each PR head in order with `git merge-tree --write-tree`
 * and `git commit-tree` (no working tree, safe concurrently), then force the branch to the result.
 * A PR head already contained in the branch so far is skipped. Commit dates are the latest committer date
 * among the inputs, so building the same inputs twice yields the same commit SHAs.
 */
export async function buildTestBranch(ctx: GitContext, spec: TestBranchSpec): Promise<TestBranchResult> {
  await branchRef(ctx, spec.testBranch);
  assertSha(spec.baseSha, 'baseSha');
  for (const pr of spec.prHeads) assertSha(pr.sha, `head of PR #${pr.number}`);
  const missing = await missingCommit(ctx, spec);
  if (missing) return { ok: false, conflictPr: null, reason: missing };
  const date = rawDate(await latestCommitterDate(ctx, [spec.baseSha, ...spec.prHeads.map((pr) => pr.sha)]));
  const prefix = spec.message ?? 'Merge pull request';
  let current = spec.baseSha;
  for (const pr of spec.prHeads) {
    const step = await mergeOne(ctx, current, pr, `${prefix} #${pr.number} into ${spec.testBranch}`, date);
    if (!step.ok) return step;
    current = step.sha;
  }
  await forceBranch(ctx, spec.testBranch, current);
  return { ok: true, sha: current };
}

/** Why the inputs cannot be used (a commit not in the repository, e.g. a PR head never pushed), or null. */
async function missingCommit(ctx: GitContext, spec: TestBranchSpec): Promise<string | null> {
  if ((await peel(ctx, spec.baseSha)) === null) return `base commit ${spec.baseSha} is not in the repository`;
  for (const pr of spec.prHeads) {
    if ((await peel(ctx, pr.sha)) === null)
      return `head ${pr.sha} of PR #${pr.number} is not in the repository`;
  }
  return null;
}

async function mergeOne(
  ctx: GitContext,
  current: string,
  pr: PrHead,
  subject: string,
  date: string,
): Promise<TestBranchResult> {
  if (await isAncestor(ctx, pr.sha, current)) return { ok: true, sha: current };
  const merged = await mergeTrees(ctx, current, pr.sha);
  if (!merged.clean) {
    return {
      ok: false,
      conflictPr: pr.number,
      reason: `merging PR #${pr.number} (${pr.sha}): ${describeFailure(merged)}`,
    };
  }
  const message = `${subject}\n\nPR #${pr.number} head ${pr.sha}`;
  const sha = await commitTree(ctx, merged.tree, [current, pr.sha], message, { committerDate: date });
  return { ok: true, sha };
}

async function latestCommitterDate(ctx: GitContext, shas: string[]): Promise<number> {
  let latest = 0;
  for (const sha of shas) latest = Math.max(latest, (await commitInfo(ctx, sha)).committerDate);
  return latest;
}
