import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandGlobs, globToRegExp } from '../../src/cli/globs.ts';

describe('globToRegExp', () => {
  it.each([
    ['/r/*.xml', '/r/a.xml', true],
    ['/r/*.xml', '/r/sub/a.xml', false],
    ['/r/**/*.xml', '/r/a.xml', true],
    ['/r/**/*.xml', '/r/x/y/z/a.xml', true],
    ['/r/**', '/r/x/y/a.txt', true],
    ['/r/test-?.xml', '/r/test-1.xml', true],
    ['/r/test-?.xml', '/r/test-12.xml', false],
    ['/r/[ab].xml', '/r/b.xml', true],
    ['/r/[!ab].xml', '/r/b.xml', false],
    ['/r/a+b (1).xml', '/r/a+b (1).xml', true],
    ['/r/*/junit.xml', '/r/pkg/junit.xml', true],
    ['/r/*/junit.xml', '/r/pkg/deep/junit.xml', false],
  ])('%s against %s is %s', (pattern, file, matches) => {
    expect(globToRegExp(pattern).test(file)).toBe(matches);
  });
});

describe('expandGlobs', () => {
  let root: string;
  const write = (rel: string) => {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '<testsuites/>');
  };
  const rel = (files: string[]) => files.map((f) => path.relative(root, f).split(path.sep).join('/'));

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-globs-'));
    for (const f of [
      'reports/unit.xml',
      'reports/e2e/chrome.xml',
      'reports/e2e/firefox.xml',
      'reports/e2e/notes.txt',
      'pkg/a/junit.xml',
      'pkg/b/junit.xml',
      'node_modules/dep/junit.xml',
      '.git/junit.xml',
    ]) {
      write(f);
    }
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('matches ** across folders, in sorted order, each file once', () => {
    const result = expandGlobs(['reports/**/*.xml', 'reports/unit.xml'], root);
    expect(rel(result.files)).toEqual([
      'reports/e2e/chrome.xml',
      'reports/e2e/firefox.xml',
      'reports/unit.xml',
    ]);
    expect(result.unmatched).toEqual([]);
  });

  it('keeps * within one folder', () => {
    expect(rel(expandGlobs(['pkg/*/junit.xml'], root).files)).toEqual(['pkg/a/junit.xml', 'pkg/b/junit.xml']);
    expect(rel(expandGlobs(['reports/*.xml'], root).files)).toEqual(['reports/unit.xml']);
  });

  it('does not wander into node_modules or .git unless the pattern names them', () => {
    expect(rel(expandGlobs(['**/junit.xml'], root).files)).toEqual(['pkg/a/junit.xml', 'pkg/b/junit.xml']);
    expect(rel(expandGlobs(['node_modules/**/junit.xml'], root).files)).toEqual([
      'node_modules/dep/junit.xml',
    ]);
  });

  it('takes absolute patterns and plain paths, and says which patterns matched nothing', () => {
    const result = expandGlobs([path.join(root, 'reports/e2e/c*.xml'), 'missing/**/*.xml', 'nope.xml'], root);
    expect(rel(result.files)).toEqual(['reports/e2e/chrome.xml']);
    expect(result.unmatched).toEqual(['missing/**/*.xml', 'nope.xml']);
  });
});
