// Entry of a parser thread. Built (dist/): loads the compiled parse-worker.js, no compiler involved.
// From the TypeScript sources (tests, `node --import tsx`): a worker thread does not inherit its
// parent's loader, so it registers tsx (a dev dependency) before loading parse-worker.ts.
import { existsSync } from 'node:fs';

const built = new URL('./parse-worker.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./parse-worker.ts');
}
