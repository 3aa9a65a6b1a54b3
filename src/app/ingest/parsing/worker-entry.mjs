// Entry of a parser thread. Built (dist/): loads the compiled worker.js, no compiler involved.
// From the TypeScript sources (tests, `node --import tsx`): a worker thread does not inherit its
// parent's loader, so it registers tsx (a dev dependency) before loading worker.ts.
import { existsSync } from 'node:fs';

const built = new URL('./worker.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./worker.ts');
}
