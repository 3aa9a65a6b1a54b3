// scripts/check-layers.mjs (part of `npm run lint`) run on small fake trees, as lint runs it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = path.resolve(import.meta.dirname, '../../scripts/check-layers.mjs');
const roots: string[] = [];

/** A tree holding `files` (paths below src/ → text); returns the checker's exit code and output. */
function check(files: Record<string, string>): { code: number | null; out: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  roots.push(root);
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(root, 'src', name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('check-layers', () => {
  it('passes a tree whose imports point inward', () => {
    const run = check({
      'lib/lru.ts': "import { x } from './other.ts';\n",
      'lib/other.ts': 'export const x = 1;\n',
      'domain/rules.ts': "import { x } from '../lib/other.ts';\n",
      'app/use-case.ts':
        "import { x } from '../lib/other.ts';\nimport type { y } from '../domain/rules.ts';\n",
      'store/rows.ts': "import { sql } from 'kysely';\nexport const q = sql`select 1`;\n",
      'http/route.ts': "import { a } from '../app/use-case.ts';\nimport fastify from 'fastify';\n",
    });
    expect(run.out).toContain('follows the layer rules');
    expect(run.code).toBe(0);
  });

  it('names each import that points outward, a migration importing live code, and SQL outside store/ and db/', () => {
    const run = check({
      'lib/bad.ts': "import { Rule } from '../domain/rules.ts';\n",
      'domain/rules.ts':
        "import { isAscii } from 'node:buffer';\nexport {\n  helper,\n} from '../app/helper.ts';\n",
      'app/helper.ts': "import { route } from '../http/route.ts';\nexport const q = db.selectFrom('t');\n",
      'http/route.ts': '// a comment naming db.selectFrom( is not SQL\nexport const route = 1;\n',
      'store/codec.ts': 'export const encode = 1;\n',
      'store/migrations/0001_x.ts': "import { encode } from '../codec.ts';\n",
    });
    expect(run.code).toBe(1);
    // The comment in http/route.ts names a builder, and is not SQL.
    expect(run.out.split('\n').filter((line) => line.startsWith('src/'))).toEqual([
      'src/app/helper.ts: imports http/route.ts',
      'src/app/helper.ts: sql',
      'src/domain/rules.ts: imports app/helper.ts',
      'src/domain/rules.ts: imports node:buffer',
      'src/lib/bad.ts: imports domain/rules.ts',
      'src/store/migrations/0001_x.ts: imports store/codec.ts',
    ]);
    expect(run.out).toContain('6 layer rule violation(s)');
  });
});
