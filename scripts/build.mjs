// Compiles src/ into dist/ (tsc -p tsconfig.build.json: `.ts` imports become `.js`) and copies what tsc
// does not emit: the plain JavaScript thread entries (*.mjs) and assets (*.css). bin/mainline.mjs and
// the worker threads run dist/, so nothing compiles TypeScript at run time.
//   node scripts/build.mjs             always builds
//   node scripts/build.mjs --if-stale  builds only when a file under src/ (or a tsconfig, package.json)
//                                      is newer than the last build (npm start, npm install's prepare)
// It also bundles the client commands alone into dist/mainline-upload.mjs (scripts/bundle-uploader.mjs);
// `npm run build` (without --if-stale) also refreshes the committed copy packages/uploader/mainline-upload.mjs
// that the mainline-upload package and action.yml use. Builds run by npm install/start never touch it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { makeUploader, UPLOADER_COPY } from './bundle-uploader.mjs';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.built');
const COPIED = /\.(mjs|css)$/;

function newestInput() {
  let newest = 0;
  for (const file of [
    'tsconfig.json',
    'tsconfig.build.json',
    'package.json',
    'scripts/build.mjs',
    'packages/uploader/package.json',
  ]) {
    newest = Math.max(newest, fs.statSync(path.join(root, file)).mtimeMs);
  }
  for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

const builtAt = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
if (process.argv.includes('--if-stale') && builtAt > 0 && builtAt >= newestInput()) process.exit(0);

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  // An install without dev dependencies (npm ci --omit=dev) has no compiler: keep the build it has.
  if (builtAt > 0) {
    console.warn(
      'mainline build: typescript is not installed (dev dependencies omitted); keeping dist/ as it is',
    );
    process.exit(0);
  }
  console.error(
    'mainline build: dist/ is missing and typescript is not installed. Run `npm install` (with dev ' +
      'dependencies) and `npm run build`, or install the packed tarball (npm pack), which carries dist/.',
  );
  process.exit(1);
}

const started = performance.now();
// Built beside dist/ and swapped in at the end: a server running from dist/ (npm start in another
// terminal) keeps finding its thread entries while a build runs, and a failed build leaves the old one.
const next = path.join(root, 'dist.next');
fs.rmSync(next, { recursive: true, force: true });
const result = spawnSync(
  process.execPath,
  [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', next],
  { cwd: root, stdio: 'inherit' },
);
if (result.status !== 0) {
  console.error('mainline build: tsc failed; dist/ is left as it was');
  fs.rmSync(next, { recursive: true, force: true });
  process.exit(result.status ?? 1);
}
for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !COPIED.test(entry.name)) continue;
  const from = path.join(entry.parentPath, entry.name);
  const to = path.join(next, path.relative(src, from));
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
}
const uploader = await makeUploader();
if (uploader === undefined) {
  console.warn('mainline build: esbuild is not installed; dist/mainline-upload.mjs not made');
} else {
  fs.writeFileSync(path.join(next, 'mainline-upload.mjs'), uploader, { mode: 0o755 });
  const committed = fs.existsSync(UPLOADER_COPY) ? fs.readFileSync(UPLOADER_COPY, 'utf8') : '';
  if (!process.argv.includes('--if-stale') && committed !== uploader) {
    fs.writeFileSync(UPLOADER_COPY, uploader, { mode: 0o755 });
    console.log(`mainline build: updated ${path.relative(root, UPLOADER_COPY)} (commit it with src/cli)`);
  }
}
fs.writeFileSync(path.join(next, '.built'), `${new Date().toISOString()}\n`);
const old = path.join(root, 'dist.old');
fs.rmSync(old, { recursive: true, force: true });
if (fs.existsSync(dist)) fs.renameSync(dist, old);
fs.renameSync(next, dist);
fs.rmSync(old, { recursive: true, force: true });
console.log(`mainline build: dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
