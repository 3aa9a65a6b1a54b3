#!/usr/bin/env node
// Enforces who may import whom in src/ (docs/design.md, "Layout"), and that SQL is written only in
// store/ and db/. Part of `npm run lint`; no dependencies, so it runs before anything is installed.
// Usage: node scripts/check-layers.mjs [root]   (root: the directory holding src/, default: cwd)
// Exits 1 and prints one line per violation. An ALLOWED entry that no longer matches anything is
// an error too, so the list only shrinks.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Everything a layer may import from src/ (folders end in "/"; a file is named whole). */
const INNER = ['lib/', 'domain/', 'store/', 'db/', 'app/', 'forge/', 'config.ts'];
const OUTER = ['runner/', 'http/', 'web/', 'cli/', 'demo/', 'main.ts'];

/** The layer of a path below src/: its first folder, or the file itself at the top. */
export const LAYERS = {
  // Generic code that knows no Mainline type.
  'lib/': { may: ['lib/'], packages: 'none' },
  // Rules and types: no I/O, so no node: builtins and no packages but the named ones.
  'domain/': { may: ['domain/', 'lib/'], packages: 'none' },
  // Opening the database and dialect-specific bulk writes; the table types are the store's.
  'db/': { may: ['db/', 'lib/', 'store/schema.ts'] },
  'store/': { may: ['store/', 'db/', 'domain/', 'lib/', 'config.ts'] },
  // Migrations are frozen: what one runs is written in it (or in migrations/frozen/), so a change to
  // live code cannot change a migration that has already run somewhere.
  'store/migrations/': { may: ['store/migrations/'] },
  // Use cases: never the edges that call them, and forges only through app/ports.ts.
  'app/': { may: ['app/', 'store/', 'db/', 'domain/', 'lib/', 'config.ts'] },
  // Forge implementations: the ports they implement, and the store for the plain git forge's rows.
  'forge/': { may: ['forge/', 'app/ports.ts', 'store/', 'db/', 'domain/', 'lib/', 'config.ts'] },
  'config.ts': { may: ['lib/', 'domain/'] },
  // Timers and leases: they drive use cases, never the store directly.
  'runner/': { may: ['runner/', 'app/', 'domain/', 'lib/', 'config.ts'] },
  'http/': { may: [...INNER, 'http/', 'web/'] },
  'web/': { may: [...INNER, 'web/', 'http/'] },
  'cli/': { may: [...INNER, ...OUTER] },
  'demo/': { may: [...INNER, ...OUTER] },
  'main.ts': { may: [...INNER, ...OUTER] },
};

/** Packages a layer whose `packages` is 'none' may still import, by importing file or folder. */
const PACKAGE_EXCEPTIONS = {
  // The reflection definition of the analytics CLI's protobuf report.
  'domain/internal-bin/schema.ts': ['protobufjs'],
};

/** Packages only the HTTP edge may import. */
const EDGE_PACKAGES = ['fastify', '@fastify/', 'typebox', '@sinclair/typebox'];
const EDGE_LAYERS = ['http/', 'web/', 'cli/', 'demo/', 'main.ts'];

/** SQL text and query builders (Kysely), allowed in store/ and db/ only. */
const SQL = [
  /\bsql(?:<[^`>]*(?:<[^`>]*>[^`>]*)*>)?`/,
  /\.(?:selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|selectNoFrom)\(/,
  /\.transaction\(\)/,
];
const SQL_LAYERS = ['store/', 'store/migrations/', 'db/'];

/**
 * Files that break a rule today, each with the rule it breaks ("imports <target>" or "sql"). Each is
 * work left over from issue 27; remove the entry with the fix.
 */
export const ALLOWED = [];

function walk(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(file, out);
    else if (/\.(?:ts|mts|mjs|cts|cjs|js)$/.test(entry.name)) out.push(file);
  }
  return out;
}

/** The import specifiers of a module's text: static imports and re-exports, import(), worker URLs. */
export function specifiers(text) {
  const found = [];
  const patterns = [
    /^[ \t]*(?:import|export)[ \t]+(?:type[ \t]+)?[\w\s{},*$]*?\bfrom[ \t]*['"]([^'"\n]+)['"]/gm,
    /^[ \t]*import[ \t]*['"]([^'"\n]+)['"]/gm,
    /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g,
    /\bnew URL\(\s*['"](\.{1,2}\/[^'"\n]+)['"]\s*,\s*import\.meta\.url\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]);
  return found;
}

/** The LAYERS key that `relative` (a path below src/, with "/") belongs to, or undefined. */
function layerOf(relative) {
  if (relative.startsWith('store/migrations/')) return 'store/migrations/';
  const top = relative.includes('/') ? `${relative.split('/')[0]}/` : relative;
  return Object.hasOwn(LAYERS, top) ? top : undefined;
}

const startsWithAny = (relative, prefixes) =>
  prefixes.some((p) => (p.endsWith('/') ? relative.startsWith(p) : relative === p));

/** Text without comments, for the SQL rule (a comment may name a builder). */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** Every violation under `root`/src, as "src/<file>: <rule>" lines, sorted. */
export function checkLayers(root, allowed = ALLOWED) {
  const src = path.join(root, 'src');
  const problems = [];
  const used = new Set();
  const report = (relative, rule) => {
    const key = `${relative} ${rule}`;
    if (allowed.includes(key)) used.add(key);
    else problems.push(`src/${relative}: ${rule}`);
  };
  for (const file of walk(src, [])) {
    const relative = path.relative(src, file).split(path.sep).join('/');
    const layer = layerOf(relative);
    if (layer === undefined) {
      problems.push(`src/${relative}: in no layer (add its folder to scripts/check-layers.mjs)`);
      continue;
    }
    const rules = LAYERS[layer];
    const text = fs.readFileSync(file, 'utf8');
    for (const spec of new Set(specifiers(text))) {
      if (spec.startsWith('.')) {
        const target = path
          .relative(src, path.resolve(path.dirname(file), spec))
          .split(path.sep)
          .join('/');
        if (target.startsWith('..')) report(relative, `imports ${spec} from outside src/`);
        else if (!startsWithAny(target, rules.may)) report(relative, `imports ${target}`);
      } else if (spec.startsWith('node:')) {
        if (layer === 'domain/') report(relative, `imports ${spec}`);
      } else {
        const exceptions = Object.entries(PACKAGE_EXCEPTIONS)
          .filter(([where]) => startsWithAny(relative, [where]))
          .flatMap(([, packages]) => packages);
        const isException = exceptions.some((p) => spec === p || spec.startsWith(`${p}/`));
        if (rules.packages === 'none' && !isException) report(relative, `imports ${spec}`);
        else if (
          !EDGE_LAYERS.includes(layer) &&
          EDGE_PACKAGES.some((p) =>
            p.endsWith('/') ? spec.startsWith(p) : spec === p || spec.startsWith(`${p}/`),
          )
        )
          report(relative, `imports ${spec}`);
      }
    }
    if (!SQL_LAYERS.includes(layer)) {
      const code = withoutComments(text);
      if (SQL.some((pattern) => pattern.test(code))) report(relative, 'sql');
    }
  }
  for (const entry of allowed) {
    if (!used.has(entry))
      problems.push(`scripts/check-layers.mjs: ALLOWED entry "${entry}" matches nothing: remove it`);
  }
  return problems.sort();
}

function describeRules() {
  return Object.entries(LAYERS)
    .map(([layer, { may }]) => `  src/${layer} may import: ${may.map((m) => `src/${m}`).join(', ')}`)
    .join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const root = process.argv[2] ?? process.cwd();
  // ALLOWED names files of this repository; another tree (the checker's own tests) gets no exceptions.
  const home = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const problems = checkLayers(root, path.resolve(root) === home ? ALLOWED : []);
  if (problems.length > 0) {
    console.error(
      `${problems.join('\n')}\n\n${problems.length} layer rule violation(s). The rules:\n${describeRules()}`,
    );
    console.error('  SQL (sql`…`, Kysely builders, .transaction()) only in src/store/ and src/db/.');
    process.exit(1);
  }
  console.log('check-layers: src/ follows the layer rules');
}
