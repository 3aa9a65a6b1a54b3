#!/usr/bin/env node
// Development entry: `mainline` run from the TypeScript sources (tsx, a dev dependency, compiles them
// on load), so no build is needed and no stale build is run. The tests spawn this one;
// bin/mainline.mjs (what users and the package run) runs the compiled dist/.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
