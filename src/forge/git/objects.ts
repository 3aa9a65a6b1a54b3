import type { Lru } from '../../lib/lru.ts';
import { GitCommandError, type GitContext, gitOut, runGit } from './git.ts';
import { isSha } from './names.ts';

/** Result of a three-way merge computed by `git merge-tree --write-tree` (no working tree). */
export type TreeMerge =
  /** Merged cleanly into tree. */
  | { clean: true; tree: string }
  /** Conflicted; paths are the files with conflicts, sorted. */
  | { clean: false; paths: string[] }
  /** Could not be merged at all (e.g. unrelated histories). */
  | { clean: false; paths: []; error: string };

/** Human-readable reason for a merge that did not go through cleanly. */
export function describeFailure(merged: Exclude<TreeMerge, { clean: true }>): string {
  return 'error' in merged ? merged.error : `merge conflict in ${merged.paths.join(', ')}`;
}

/** Author or committer of a commit, with its date as git reads it ("@<unix seconds> <+zone>"). */
export interface Signature {
  name: string;
  email: string;
  date: string;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: Signature;
  committerDate: number;
  /** Full message, trailing newlines removed. */
  message: string;
}

/** Merge commit `theirs` into `ours`, using their merge base(s). */
export async function mergeTrees(ctx: GitContext, ours: string, theirs: string): Promise<TreeMerge> {
  const args = ['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs];
  const result = await runGit(ctx, args, { okCodes: [1, 128] });
  if (result.code === 128) {
    if (!/unrelated histories/.test(result.stderr))
      throw new GitCommandError(args, 128, result.stderr, 'exit 128');
    return { clean: false, paths: [], error: `${ours} and ${theirs} have unrelated histories` };
  }
  const fields = result.stdout.split('\0');
  const tree = fields[0] ?? '';
  if (result.code === 0) return { clean: true, tree };
  const end = fields.indexOf('', 1);
  const paths = fields.slice(1, end < 0 ? undefined : end);
  return { clean: false, paths: [...new Set(paths)].sort() };
}

/** Create a commit object; message goes through stdin so it is never parsed as arguments. */
export async function commitTree(
  ctx: GitContext,
  tree: string,
  parents: string[],
  message: string,
  dates: { author?: Signature; committerDate: string },
): Promise<string> {
  const env: Record<string, string> = { GIT_COMMITTER_DATE: dates.committerDate };
  env['GIT_AUTHOR_DATE'] = dates.author?.date ?? dates.committerDate;
  if (dates.author) {
    env['GIT_AUTHOR_NAME'] = dates.author.name;
    env['GIT_AUTHOR_EMAIL'] = dates.author.email;
  }
  const args = ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'];
  return gitOut(ctx, args, { env, input: message.endsWith('\n') ? message : `${message}\n` });
}

/** Metadata of one commit. */
export async function commitInfo(ctx: GitContext, sha: string): Promise<CommitInfo> {
  const format = '%H%x00%T%x00%P%x00%an%x00%ae%x00%ad%x00%ct%x00%B';
  const out = await gitOut(ctx, ['show', '-s', '--date=raw', `--format=${format}`, sha, '--']);
  const [hash = '', tree = '', parents = '', name = '', email = '', date = '', ct = '', ...rest] =
    out.split('\0');
  return {
    sha: hash,
    tree,
    parents: parents === '' ? [] : parents.split(' '),
    author: { name, email, date: `@${date}` },
    committerDate: Number(ct),
    message: rest.join('\0').replace(/\n+$/, ''),
  };
}

/** True when ancestor is reachable from descendant (or equal to it). */
export async function isAncestor(ctx: GitContext, ancestor: string, descendant: string): Promise<boolean> {
  const { code } = await runGit(ctx, ['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] });
  return code === 0;
}

/**
 * Merge bases found, by repository and commit pair, least recently used dropped first. A commit's id
 * covers its whole ancestry, so the answer for two commits never changes; the queue runner asks for
 * each queued PR's every poll. The app's (app/caches.ts, MAINLINE_MERGE_BASE_CACHE), handed to the
 * git forge it builds.
 */
export type MergeBases = Lru<{ readonly base: string | null }>;

/** The best common ancestor of two commits, or null when they share no history. */
export async function mergeBase(
  ctx: GitContext,
  a: string,
  b: string,
  known: MergeBases,
): Promise<string | null> {
  // Only commit ids are remembered: what a branch name means changes.
  const key = isSha(a) && isSha(b) ? `${ctx.gitDir}\u0000${a}\u0000${b}` : undefined;
  const held = key === undefined ? undefined : known.get(key);
  if (held !== undefined) return held.base;
  const { stdout, code } = await runGit(ctx, ['merge-base', a, b], { okCodes: [1] });
  const base = code === 0 ? stdout.trim() : null;
  if (key !== undefined) known.set(key, { base });
  return base;
}

/** Commits reachable from head but not from base, oldest first, with their parents. */
export async function commitsBetween(ctx: GitContext, base: string, head: string): Promise<string[][]> {
  const out = await gitOut(ctx, [
    'rev-list',
    '--reverse',
    '--topo-order',
    '--parents',
    `${base}..${head}`,
    '--',
  ]);
  return out === '' ? [] : out.split('\n').map((line) => line.split(' '));
}

/** A date git reads unambiguously ("@<unix seconds> +0000"), for a unix time in UTC. */
export function rawDate(seconds: number): string {
  return `@${Math.floor(seconds)} +0000`;
}
