import { type GitContext, GitInputError, runGit } from './git.ts';

const SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** True for a full SHA-1 (40) or SHA-256 (64) object name in lower-case hex. */
export function isSha(value: string): boolean {
  return SHA.test(value);
}

/** Throw GitInputError unless value is a full lower-case hex object name. */
export function assertSha(value: string, what: string): string {
  if (!isSha(value))
    throw new GitInputError(`${what} must be a 40 or 64 character hex SHA, got ${show(value)}`);
  return value;
}

/** Cheap checks done before asking git: nothing git could read as an option, no control characters. */
function assertPlausibleBranch(name: string): void {
  if (name.length === 0 || name.length > 255) throw new GitInputError(`invalid branch name ${show(name)}`);
  if (name.startsWith('-')) throw new GitInputError(`branch name ${show(name)} must not start with "-"`);
  if (name.startsWith('refs/'))
    throw new GitInputError(`branch name ${show(name)} must not start with "refs/"`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u0020\u007f]/.test(name))
    throw new GitInputError(`branch name ${show(name)} contains whitespace`);
}

/**
 * Validate a branch name with `git check-ref-format` and return its full ref (refs/heads/<name>);
 * a name in ctx.refNames was accepted before.
 */
export async function branchRef(ctx: GitContext, name: string): Promise<string> {
  assertPlausibleBranch(name);
  const ref = `refs/heads/${name}`;
  if (ctx.refNames?.get(ref) !== undefined) return ref;
  const { code } = await runGit(ctx, ['check-ref-format', ref], { okCodes: [1] });
  if (code !== 0) throw new GitInputError(`invalid branch name ${show(name)}`);
  ctx.refNames?.set(ref, true);
  return ref;
}

/** A value quoted for an error message, shortened so hostile input cannot flood logs. */
export function show(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}
