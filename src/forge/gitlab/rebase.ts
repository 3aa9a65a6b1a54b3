import { type GitContext, gitOut, runGit } from '../git/git.ts';
import { commitInfo, commitsBetween, commitTree, isAncestor, mergeTrees, rawDate } from '../git/objects.ts';

/** Where the rebased heads put into test branches are kept in the forge's clone, per merge request. */
const TESTED = 'refs/mainline-tested';

export type Replayed =
  | { readonly ok: true; readonly sha: string }
  | { readonly ok: false; readonly commit: string; readonly reason: string };

/**
 * A merge request's commits (those of head not reachable from onto, merges left out) replayed on
 * onto, as `git rebase` does and as GitLab's rebase would: each commit's change is merged onto the
 * commit before it with its parent as the base; a commit left with no change is dropped; author,
 * author date, message and committer date are kept (the committer is Mainline), so the same head on
 * the same commit always gives the same SHA: the commit tested is the commit merged. A head already
 * on onto is answered as it is.
 */
export async function replay(ctx: GitContext, onto: string, head: string): Promise<Replayed> {
  if (await isAncestor(ctx, onto, head)) return { ok: true, sha: head };
  // Oldest first, each with its parents; merge commits are left out, as git rebase does.
  const commits = (await commitsBetween(ctx, onto, head)).filter((line) => line.length <= 2);
  let current = onto;
  let currentTree = await treeOf(ctx, onto);
  for (const [sha = ''] of commits) {
    const c = await commitInfo(ctx, sha);
    const parent = c.parents[0];
    if (parent === current) {
      current = c.sha;
      currentTree = c.tree;
      continue;
    }
    // merge-tree takes the commits' merge base as the base: a stand-in commit with current's tree
    // on the commit's own parent makes that parent the base, which is what a cherry-pick merges from.
    const standIn = await commitTree(ctx, currentTree, parent === undefined ? [] : [parent], 'rebase', {
      committerDate: rawDate(0),
    });
    const merged = await mergeTrees(ctx, standIn, c.sha);
    if (!merged.clean) {
      const what = 'error' in merged ? merged.error : `conflict in ${merged.paths.join(', ')}`;
      return { ok: false, commit: c.sha, reason: `${what} (replaying ${c.sha.slice(0, 12)})` };
    }
    if (merged.tree === currentTree) continue;
    current = await commitTree(ctx, merged.tree, [current], c.message, {
      author: c.author,
      committerDate: rawDate(c.committerDate),
    });
    currentTree = merged.tree;
  }
  return { ok: true, sha: current };
}

/**
 * The merge commit GitLab will add for a semi-linear merge (the rebased head's tree on the target),
 * made the same way every time; GitLab's own has another SHA but this tree.
 */
export async function predictedMergeCommit(
  ctx: GitContext,
  target: string,
  rebased: string,
  iid: number,
): Promise<string> {
  return commitTree(ctx, await treeOf(ctx, rebased), [target, rebased], `Merge merge request !${iid}`, {
    committerDate: rawDate(0),
  });
}

export function treeOf(ctx: GitContext, sha: string): Promise<string> {
  return gitOut(ctx, ['rev-parse', '--verify', `${sha}^{tree}`]);
}

/** Keeps that a rebased head of merge request iid went into a test branch. */
export async function keepTested(ctx: GitContext, iid: number, sha: string): Promise<void> {
  await runGit(ctx, ['update-ref', `${TESTED}/${iid}/${sha}`, sha]);
}

/** The rebased heads of merge request iid that went into test branches, with their trees. */
export async function testedOf(ctx: GitContext, iid: number): Promise<{ sha: string; tree: string }[]> {
  const out = await gitOut(ctx, ['for-each-ref', '--format=%(objectname) %(tree)', `${TESTED}/${iid}/`]);
  return out === ''
    ? []
    : out.split('\n').map((line) => {
        const [sha = '', tree = ''] = line.split(' ');
        return { sha, tree };
      });
}

/** Forgets the rebased heads of a merge request (once it merged), and its auto-merge mark. */
export async function forgetTested(ctx: GitContext, iid: number): Promise<void> {
  const kept = await testedOf(ctx, iid);
  const marked = (await autoMergeMark(ctx, iid)) !== null;
  if (kept.length === 0 && !marked) return;
  await runGit(ctx, ['update-ref', '--stdin'], {
    input: [
      ...kept.map((k) => `delete ${TESTED}/${iid}/${k.sha}\n`),
      ...(marked ? [`delete ${AUTO_MERGE}/${iid}\n`] : []),
    ].join(''),
  });
}

/** Where the head Mainline set GitLab's auto-merge of a merge request at is kept. */
const AUTO_MERGE = 'refs/mainline-auto-merge';

/** Keeps that Mainline set GitLab's auto-merge of merge request iid at sha. */
export async function markAutoMerge(ctx: GitContext, iid: number, sha: string): Promise<void> {
  await runGit(ctx, ['update-ref', `${AUTO_MERGE}/${iid}`, sha]);
}

/** The head Mainline set GitLab's auto-merge of merge request iid at (null: none). */
export async function autoMergeMark(ctx: GitContext, iid: number): Promise<string | null> {
  const res = await runGit(ctx, ['rev-parse', '--verify', '--quiet', `${AUTO_MERGE}/${iid}`], {
    okCodes: [1],
  });
  return res.code === 0 ? res.stdout.trim() : null;
}
