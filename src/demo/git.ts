import { execFile } from 'node:child_process';
import os from 'node:os';

/** Who makes a commit; the email is derived from the login. */
export interface GitPerson {
  readonly login: string;
  readonly name: string;
}

/**
 * The demo's git commands run with no system or user configuration (no hooks, signing or aliases of
 * the person running the demo can interfere) and never prompt.
 */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Mainline demo',
    GIT_AUTHOR_EMAIL: 'demo@shop.example',
    GIT_COMMITTER_NAME: 'Mainline demo',
    GIT_COMMITTER_EMAIL: 'demo@shop.example',
    ...extra,
  };
}

/** Runs git and resolves with its stdout; rejects with git's stderr in the message. */
export function git(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...args],
      { cwd: options.cwd, env: gitEnv(options.env), maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve(stdout);
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        const reason =
          code === 'ENOENT'
            ? 'git is not installed (or not on PATH)'
            : String(stderr).trim() || error.message;
        reject(new Error(`git ${args.join(' ')}: ${reason}`));
      },
    );
  });
}

/** Environment variables that make a commit authored and committed by `person` at `date`. */
export function authorEnv(person: GitPerson, date?: Date): Record<string, string> {
  const email = `${person.login}@shop.example`;
  return {
    GIT_AUTHOR_NAME: person.name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: person.name,
    GIT_COMMITTER_EMAIL: email,
    ...(date === undefined
      ? {}
      : { GIT_AUTHOR_DATE: date.toISOString(), GIT_COMMITTER_DATE: date.toISOString() }),
  };
}
