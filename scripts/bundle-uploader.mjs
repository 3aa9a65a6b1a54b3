// The uploader as one file: src/cli/uploader.ts and what it imports (src/cli, src/domain/ci-env.ts), bundled
// by esbuild into an ES module for Node 20 and later that imports nothing but `node:` built-ins (checked).
// scripts/build.mjs writes it to dist/mainline-upload.mjs; the committed copy packages/uploader/
// mainline-upload.mjs is what the mainline-upload package and action.yml run.
//   node scripts/bundle-uploader.mjs          rewrite the committed copy
//   node scripts/bundle-uploader.mjs --check  exit 1 when the committed copy is not what the sources make
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const packageDir = path.join(root, 'packages', 'uploader');
export const UPLOADER_COPY = path.join(packageDir, 'mainline-upload.mjs');

/** The bundle's text; undefined when esbuild is not installed (an install without dev dependencies). */
export async function makeUploader() {
  let esbuild;
  try {
    esbuild = await import(createRequire(path.join(root, 'package.json')).resolve('esbuild'));
  } catch {
    return undefined;
  }
  const { version } = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  const result = await esbuild.build({
    stdin: {
      contents: [
        "import { uploaderMain } from './src/cli/uploader.ts';",
        'const out = {',
        "  log: (s) => process.stdout.write(s + '\\n'),",
        "  err: (s) => process.stderr.write(s + '\\n'),",
        '};',
        `process.exitCode = await uploaderMain(process.argv.slice(2), out, ${JSON.stringify(version)});`,
      ].join('\n'),
      resolveDir: root,
      sourcefile: 'mainline-upload.mjs',
      loader: 'ts',
    },
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    charset: 'utf8',
    legalComments: 'none',
    metafile: true,
    write: false,
    logLevel: 'warning',
    banner: {
      js: [
        '#!/usr/bin/env node',
        `// mainline-upload ${version}: the client commands of Mainline (upload, test) in one file, made by`,
        '// scripts/build.mjs (npm run build) from src/cli/uploader.ts. Do not edit: edit src/cli and rebuild.',
      ].join('\n'),
    },
  });
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  const foreign = imports.filter((p) => !p.startsWith('node:'));
  if (foreign.length > 0) {
    throw new Error(`the uploader must import only node: built-ins, not ${foreign.join(', ')}`);
  }
  return result.outputFiles[0].text;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const code = await makeUploader();
  if (code === undefined) {
    console.error('bundle-uploader: esbuild is not installed (npm install with dev dependencies)');
    process.exit(1);
  }
  const current = fs.existsSync(UPLOADER_COPY) ? fs.readFileSync(UPLOADER_COPY, 'utf8') : '';
  const name = path.relative(root, UPLOADER_COPY);
  if (process.argv.includes('--check')) {
    if (current !== code) {
      console.error(`${name} is not what src/cli makes now: run \`npm run build\` and commit it`);
      process.exit(1);
    }
    console.log(`${name} is up to date`);
  } else if (current !== code) {
    fs.writeFileSync(UPLOADER_COPY, code, { mode: 0o755 });
    console.log(`updated ${name}`);
  }
}
