import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Demo, type DemoOptions, runDemo } from '../../src/demo/demo.ts';

/**
 * The demo on a free port, quiet, in a data folder of the test's own (so the folder outlives the
 * demo's close until the test is done with it); close() stops the demo and removes the folder.
 */
export async function startDemo(
  prefix: string,
  options: Omit<DemoOptions, 'port' | 'dataDir' | 'logLevel'> = {},
): Promise<Demo> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const demo = await runDemo({
    port: 0,
    dataDir: path.join(root, 'data'),
    timeoutSeconds: 60,
    logLevel: 'silent',
    ...options,
  });
  return {
    ...demo,
    close: async () => {
      await demo.close();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
