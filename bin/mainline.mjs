#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx compiles them on load), so there is no build step
// and no stale build: `npm start`, `npx mainline …` and the tests all run the same code.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
