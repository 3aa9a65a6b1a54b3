// Runs one program and answers with its output and exit code: the git thread's work
// (spawn-thread.mjs), and the request thread's when that thread cannot start (spawner.ts). Plain
// JavaScript, so the thread loads it without compiling anything.
import { execFile } from 'node:child_process';

/** Resolves once the program has exited; `code` is null when it was killed (timeout, output over maxBuffer) or could not start. */
export function runChild(file, args, options, input) {
  return new Promise((resolve) => {
    const child = execFile(file, args, { ...options, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' && !error.killed ? error.code : null) : 0;
      resolve({ stdout, stderr, code });
    });
    child.stdin?.on('error', () => {}); // the program may exit before reading all its input
    child.stdin?.end(input);
  });
}
