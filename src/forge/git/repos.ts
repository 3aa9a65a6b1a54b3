import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { type GitContext, GitInputError, gitOut, runGit } from './git.ts';
import { assertSha, branchRef, isSha, show } from './names.ts';
import { readRefValue } from './ref-files.ts';

/** Which repository: forge host, owner (may contain "/" for GitLab groups) and name. */
export interface RepoId {
  host: string;
  owner: string;
  name: string;
  /**
   * The Mainline repository's id. When present the repository lives in its own folder
   * `<root>/<id>/<host>/<owner>/<name>.git`: repositories belong to organizations, and two
   * organizations naming the same host/owner/name must never share one.
   */
  id?: string;
}

/** A branch and the commit it points at. */
export interface BranchHead {
  name: string;
  sha: string;
}

/** Outcome of moving a branch with compare-and-swap. */
export type RefUpdate =
  /** The branch now points at the new commit. */
  | { ok: true }
  /** The branch was not at the expected commit (someone pushed meanwhile, to movedTo); nothing changed. */
  | { ok: false; reason: string; movedTo: string | null };

const HOST = /^[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]{1,5})?$/;
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

function assertSegment(value: string, what: string, pattern: RegExp): void {
  if (!pattern.test(value) || value.length > 100 || value.includes('..') || value.endsWith('.')) {
    throw new GitInputError(`invalid ${what} ${show(value)}`);
  }
}

/**
 * `<root>/<id>/<host>/<owner…>/<name>.git` (`<root>/<host>/<owner…>/<name>.git` without an id, the
 * layout before repositories were kept apart per organization); refuses "..", empty or absolute
 * segments and anything odd.
 */
export function repoPath(root: string, repo: RepoId): string {
  assertSegment(repo.host, 'host', HOST);
  const owner = repo.owner.split('/');
  if (owner.length > 20) throw new GitInputError(`owner ${show(repo.owner)} is nested too deeply`);
  for (const part of owner) assertSegment(part, 'owner segment', SEGMENT);
  assertSegment(repo.name, 'repository name', SEGMENT);
  if (repo.id !== undefined) assertSegment(repo.id, 'repository id', SEGMENT);
  const base = resolve(root);
  const scope = repo.id === undefined ? [] : [repo.id];
  const path = join(base, ...scope, repo.host, ...owner, `${repo.name}.git`);
  const rel = relative(base, path);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new GitInputError(`repository path escapes the root`);
  return path;
}

/**
 * Create the bare repository (default branch main) unless it exists. It is initialised in a temporary sibling
 * folder and renamed into place, so concurrent callers (or a crash) never leave a half-made repository.
 */
export async function ensureRepository(ctx: GitContext): Promise<void> {
  if (existsSync(join(ctx.gitDir, 'HEAD'))) return;
  await mkdir(dirname(ctx.gitDir), { recursive: true });
  const scratch = await mkdtemp(join(dirname(ctx.gitDir), '.init-'));
  try {
    await runGit({ ...ctx, gitDir: scratch }, [
      'init',
      '--quiet',
      '--bare',
      '--template=',
      '--initial-branch=main',
      scratch,
    ]);
    await rename(scratch, ctx.gitDir).catch((error: NodeJS.ErrnoException) => {
      if (!existsSync(join(ctx.gitDir, 'HEAD'))) throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The commit a full ref or object name points at, or null when it does not exist. */
export async function peel(ctx: GitContext, refOrSha: string): Promise<string | null> {
  const args = ['rev-parse', '--verify', '--quiet', `${refOrSha}^{commit}`];
  const { stdout, code } = await runGit(ctx, args, { okCodes: [1] });
  return code === 0 ? stdout.trim() : null;
}

/** Head commit of a branch, or null when the branch does not exist. */
export async function branchHead(ctx: GitContext, branch: string): Promise<string | null> {
  return peel(ctx, await branchRef(ctx, branch));
}

/**
 * The object a branch names, read from the ref files without starting git (see ref-files.ts), or null
 * when the branch does not exist; git answers when the files are not plain enough to be sure. Not
 * peeled: a cheap identity of the branch's position (same value, same head commit).
 */
export async function branchTip(ctx: GitContext, branch: string): Promise<string | null> {
  const ref = await branchRef(ctx, branch);
  const read = await readRefValue(ctx.gitDir, ref);
  if (read !== undefined) return read;
  const { stdout, code } = await runGit(ctx, ['rev-parse', '--verify', '--quiet', ref], { okCodes: [1] });
  return code === 0 ? stdout.trim() : null;
}

/** Resolve a full SHA or a branch name to a commit, or null when absent. */
export async function resolveRef(ctx: GitContext, ref: string): Promise<string | null> {
  if (isSha(ref)) return peel(ctx, ref);
  return branchHead(ctx, ref);
}

/** Point a branch at sha, creating it or moving it whatever it pointed at. */
export async function forceBranch(ctx: GitContext, branch: string, sha: string): Promise<void> {
  await runGit(ctx, ['update-ref', '-m', 'mainline', await branchRef(ctx, branch), sha]);
}

/** Move a branch from oldSha to newSha atomically; fails (without throwing) if it is no longer at oldSha. */
export async function casBranch(
  ctx: GitContext,
  branch: string,
  newSha: string,
  oldSha: string,
): Promise<RefUpdate> {
  const ref = await branchRef(ctx, branch);
  assertSha(newSha, 'new sha');
  assertSha(oldSha, 'old sha');
  const { code, stderr } = await runGit(ctx, ['update-ref', '-m', 'mainline', ref, newSha, oldSha], {
    okCodes: [1, 128],
  });
  if (code === 0) return { ok: true };
  const now = await peel(ctx, ref);
  if (now === oldSha)
    throw new Error(`update-ref ${ref} failed although it is at ${oldSha}: ${stderr.trim()}`);
  return {
    ok: false,
    reason: `${branch} moved to ${now ?? '(deleted)'} while merging (expected ${oldSha})`,
    movedTo: now,
  };
}

/** Delete a branch; an absent branch is not an error. */
export async function deleteBranch(ctx: GitContext, branch: string): Promise<void> {
  await runGit(ctx, ['update-ref', '-m', 'mainline', '-d', await branchRef(ctx, branch)]);
}

/**
 * Every branch that points at a commit, by name, from one git process (the queue runner compares
 * all queued PRs' heads at once). Branches pointing at anything else are left out.
 */
export async function commitBranches(ctx: GitContext): Promise<Map<string, string>> {
  const out = await gitOut(ctx, [
    'for-each-ref',
    '--format=%(objecttype) %(objectname) %(refname)',
    'refs/heads/',
  ]);
  const heads = new Map<string, string>();
  for (const line of out.split('\n')) {
    const [type, sha, ref] = line.split(' ', 3);
    if (type === 'commit' && sha !== undefined && ref?.startsWith('refs/heads/'))
      heads.set(ref.slice('refs/heads/'.length), sha);
  }
  return heads;
}

/** Branches whose name starts with prefix (plain string prefix, not a glob), sorted by name. */
export async function listBranches(ctx: GitContext, prefix: string): Promise<BranchHead[]> {
  const out = await gitOut(ctx, ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/']);
  const heads: BranchHead[] = [];
  for (const line of out.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) continue;
    const name = line.slice(space + 1).slice('refs/heads/'.length);
    if (name.startsWith(prefix)) heads.push({ name, sha: line.slice(0, space) });
  }
  return heads.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
