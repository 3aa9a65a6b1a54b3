#!/usr/bin/env node
// Runs the compiled JavaScript in dist/: `npm run build` makes it (npm install's prepare and npm start
// do when src/ changed) and the packed tarball carries it. scripts/mainline-ts.mjs runs the sources.
import { existsSync } from 'node:fs';

const built = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(built)) {
  process.stderr.write('mainline: dist/ is missing: run `npm run build` (or `npm install`) first\n');
  process.exit(1);
}
const { main } = await import(built.href);
process.exitCode = await main(process.argv.slice(2));
