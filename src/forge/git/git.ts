import { tmpdir } from 'node:os';
import type { Lru } from '../../lib/lru.ts';
import { runProcess, type SpawnOutcome } from './spawner.ts';

/** Name and e-mail git records as committer (and author of merge commits Mainline creates). */
export interface GitIdentity {
  name: string;
  email: string;
}

/**
 * Branch refs `git check-ref-format` accepted. Its answer depends on the name alone, and the queue
 * runner asks about the same few branches every poll: remembering them saves a git process per lookup.
 */
export type RefNames = Lru<true>;

/** How git is run against one repository. */
export interface GitContext {
  /** Absolute path of the bare repository (passed as GIT_DIR, never discovered). */
  gitDir: string;
  identity: GitIdentity;
  timeoutMs: number;
  /** Branch refs git accepted before (names.ts branchRef); absent: every name is checked by git. */
  refNames?: RefNames;
}

export interface GitRunOptions {
  /** Exit codes that are answers rather than failures (0 is always accepted). */
  okCodes?: number[];
  /** Written to git's standard input. */
  input?: string;
  /** Extra environment (author identity, dates); cannot override the isolation variables. */
  env?: Record<string, string>;
}

export interface GitRunResult {
  stdout: string;
  stderr: string;
  code: number;
}

export const DEFAULT_IDENTITY: GitIdentity = { name: 'Mainline', email: 'mainline@localhost' };
export const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_BUFFER = 64 * 1024 * 1024;

/** Input Mainline refuses to hand to git (hostile or malformed names, SHAs, paths). */
export class GitInputError extends Error {
  override name = 'GitInputError';
}

/** git exited unexpectedly (missing repository, corrupt object, timeout, …). */
export class GitCommandError extends Error {
  override name = 'GitCommandError';
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
    detail: string,
  ) {
    super(`git ${args.join(' ')} failed (${detail}): ${stderr.trim() || 'no output'}`);
  }
}

/** An environment built from scratch: no user or system config, no prompts, no inherited GIT_* variables. */
function isolatedEnv(ctx: GitContext, extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  return {
    GIT_AUTHOR_NAME: ctx.identity.name,
    GIT_AUTHOR_EMAIL: ctx.identity.email,
    ...extra,
    PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: tmpdir(),
    LC_ALL: 'C',
    GIT_DIR: ctx.gitDir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_COMMITTER_NAME: ctx.identity.name,
    GIT_COMMITTER_EMAIL: ctx.identity.email,
  };
}

/**
 * Run git with an argument array (never a shell), started from the git thread (spawner.ts). Resolves
 * for exit 0 and okCodes; throws GitCommandError otherwise.
 */
export async function runGit(
  ctx: GitContext,
  args: string[],
  opts: GitRunOptions = {},
): Promise<GitRunResult> {
  let outcome: SpawnOutcome;
  try {
    outcome = await runProcess(
      'git',
      args,
      {
        env: isolatedEnv(ctx, opts.env),
        timeout: ctx.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: MAX_BUFFER,
      },
      opts.input ?? '',
    );
  } catch (error) {
    throw new GitCommandError(args, null, '', (error as Error).message);
  }
  const { stdout, stderr, code } = outcome;
  if (code !== null && (code === 0 || opts.okCodes?.includes(code))) return { stdout, stderr, code };
  const detail = code === null ? `killed after ${ctx.timeoutMs} ms or by a signal` : `exit ${code}`;
  throw new GitCommandError(args, code, stderr, detail);
}

/** Run git and return its stdout without the trailing newline. */
export async function gitOut(ctx: GitContext, args: string[], opts: GitRunOptions = {}): Promise<string> {
  const { stdout } = await runGit(ctx, args, opts);
  return stdout.replace(/\n$/, '');
}
