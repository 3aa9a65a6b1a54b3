// The thread that starts git processes for the server (spawner.ts). Starting a process forks the
// whole server: the fork copies its page tables, and on the request thread that copy kept requests
// waiting. Here only this thread
// waits. Plain JavaScript: nothing to compile, so it starts in a few milliseconds.
import { parentPort } from 'node:worker_threads';
import { runChild } from './run-child.mjs';

parentPort?.on('message', async (m) => {
  const outcome = await runChild(m.file, m.args, m.options, m.input);
  parentPort?.postMessage({ id: m.id, ...outcome });
});
