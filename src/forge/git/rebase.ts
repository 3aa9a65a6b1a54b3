import type { GitContext } from './git.ts';
import { commitInfo, commitTree, describeFailure, mergeTrees, rawDate } from './objects.ts';

/** Outcome of replaying commits on top of a base. */
export type RebaseResult =
  /** sha is the last replayed commit (the base itself when every commit was already applied). */
  | { ok: true; sha: string }
  /** A commit conflicted or could not be replayed; nothing was published. */
  | { ok: false; reason: string };

/** Fixed date for the throwaway commits used as merge bases, so they are reproducible. */
const SCAFFOLD_DATE = rawDate(0);

/**
 * Replay commits (each `[sha, parent]`, oldest first, as from `rev-list --parents`) on top of base, keeping
 * authors and messages. Merge commits are refused. Commits whose change is already present are dropped.
 */
export async function rebaseCommits(
  ctx: GitContext,
  base: string,
  commits: string[][],
  committerDate: string,
): Promise<RebaseResult> {
  for (const [sha, ...parents] of commits) {
    if (parents.length !== 1) {
      const what = parents.length === 0 ? 'a root commit' : 'a merge commit';
      return {
        ok: false,
        reason: `${sha} is ${what}; rebase merging cannot replay it (use merge_commit or squash)`,
      };
    }
  }
  let current = base;
  let currentTree = (await commitInfo(ctx, base)).tree;
  for (const [sha, parent] of commits) {
    if (!sha || !parent) continue;
    const step = await replayOne(ctx, current, currentTree, sha, parent);
    if (!step.ok) return step;
    if (step.tree === currentTree) continue;
    current = await commitTree(ctx, step.tree, [current], step.message, {
      author: step.author,
      committerDate,
    });
    currentTree = step.tree;
  }
  return { ok: true, sha: current };
}

/**
 * Cherry-pick without a working tree: git 2.39's merge-tree has no --merge-base, so make a scaffold commit
 * with the current tree whose only parent is the commit's parent; merging the commit into it then uses that
 * parent as merge base, which is exactly a cherry-pick.
 */
async function replayOne(ctx: GitContext, current: string, currentTree: string, sha: string, parent: string) {
  const info = await commitInfo(ctx, sha);
  const scaffold = await commitTree(ctx, currentTree, [parent], `mainline: replay ${sha} onto ${current}`, {
    committerDate: SCAFFOLD_DATE,
  });
  const merged = await mergeTrees(ctx, scaffold, sha);
  const subject = info.message.split('\n')[0] ?? '';
  if (!merged.clean) {
    return { ok: false as const, reason: `replaying ${sha} (${subject}): ${describeFailure(merged)}` };
  }
  return { ok: true as const, tree: merged.tree, message: info.message, author: info.author };
}
