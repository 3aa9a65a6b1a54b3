// The thread that starts git processes for the server (spawner.ts). Starting a process forks the
// whole server: the fork copies its page tables, ~2-5 ms for a server of a few hundred MB, and on
// the request thread every one of those milliseconds was a request waiting. Here only this thread
// waits. Plain JavaScript: nothing to compile, so it starts in a few milliseconds.
import { execFile } from 'node:child_process';
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', (m) => {
  const child = execFile(m.file, m.args, m.options, (error, stdout, stderr) => {
    parentPort?.postMessage({
      id: m.id,
      stdout,
      stderr,
      // Exit code; null when git was killed (timeout, output over maxBuffer) or could not be started.
      code: error ? (typeof error.code === 'number' && !error.killed ? error.code : null) : 0,
    });
  });
  child.stdin?.on('error', () => {}); // git may exit before reading all input
  child.stdin?.end(m.input ?? '');
});
