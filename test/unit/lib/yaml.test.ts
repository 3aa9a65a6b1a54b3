import { describe, expect, it } from 'vitest';
import {
  blockMapping,
  contentLines,
  flowItems,
  isNull,
  scalar,
  YamlSyntaxError,
} from '../../../src/lib/yaml.ts';

/** The message of the YamlSyntaxError `run` throws. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof YamlSyntaxError) return error.message;
    throw error;
  }
  throw new Error('expected a YamlSyntaxError');
}

describe('YAML subset', () => {
  it('reads nested block mappings, skipping comments, blank lines and a leading ---', () => {
    const lines = contentLines(
      '\uFEFF---\n# top\nmerge:   # the queue\n  required_statuses:\n    - build\n\nother: x\n',
    );
    const top = blockMapping(lines);
    expect([...top.keys()]).toEqual(['merge', 'other']);
    const merge = top.get('merge');
    expect(merge?.value).toBe('');
    const nested = blockMapping(merge?.children ?? []);
    expect(nested.get('required_statuses')?.children.map((line) => line.text)).toEqual(['- build']);
    expect(top.get('other')?.value).toBe('x');
  });

  it('reads plain, quoted and flow-sequence scalars', () => {
    const line = { no: 1, indent: 0, text: '' };
    expect(flowItems(line, `[build, 'it''s', "unit \\"tests\\"", ]`)).toEqual([
      'build',
      "it's",
      'unit "tests"',
    ]);
    expect(flowItems(line, '[]')).toEqual([]);
    expect(scalar(line, 'a # b')).toBe('a # b');
    expect(['', '~', 'null', 'x'].map(isNull)).toEqual([true, true, true, false]);
  });

  it('refuses what it does not implement, naming the line', () => {
    expect(refusal(() => contentLines('a: 1\n\tb: 2'))).toBe('line 2: tabs are not allowed in indentation');
    expect(refusal(() => contentLines('a: 1\n---\nb: 2'))).toBe(
      'line 2: only one YAML document is supported',
    );
    expect(refusal(() => blockMapping(contentLines('a: 1\na: 2')))).toBe('line 2: duplicate key "a"');
    const line = { no: 3, indent: 0, text: '' };
    expect(refusal(() => scalar(line, '&anchor'))).toBe('line 3: unsupported value "&anchor"');
    expect(refusal(() => flowItems(line, '[a, b'))).toBe('line 3: unterminated [ list');
    expect(refusal(() => scalar(line, "''"))).toBe('line 3: empty name');
  });
});
