// Behaviour of the JUnit parser on hand-written edge cases, bytes input and batching.
import { describe, expect, it } from 'vitest';
import { createJunitParser } from '../../src/domain/junit/index.ts';
import { outline, parseChunks, parseText, readLocalFixture } from './fixtures-junit/helpers.ts';

describe('JUnit parser edge cases (fixtures-junit/edge-cases.xml)', () => {
  const { attempts, summary } = parseText(readLocalFixture('edge-cases.xml'));

  it('produces one attempt per named testcase and warns about the nameless one', () => {
    expect(summary.ok).toBe(true);
    expect(outline(attempts)).toEqual([
      'root level case passed#0',
      'inherits suite file passed#0',
      'own filepath failed#0',
      'gtest disabled skipped#0',
      'errored failed#0',
      "it's outer passed#0",
    ]);
    expect(summary.counts).toEqual({ testcases: 6, attempts: 6, failures: 2, skipped: 1, retries: 0 });
    expect(summary.problems).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: '<testcase> without a name attribute ignored',
      }),
    ]);
    expect(summary.problems[0]?.line).toBe(15);
  });

  it('resolves parent, suite and file the way §a.5 describes', () => {
    expect(attempts.map((a) => [a.name, a.parent, a.suite, a.file])).toEqual([
      ['root level case', null, null, null],
      ['inherits suite file', 'outer', 'inner', 'src/outer.spec.ts'],
      ['own filepath', 'outer', 'inner', 'src/own.ts'],
      ['gtest disabled', 'outer', 'inner', 'src/outer.spec.ts'],
      ['errored', 'outer', 'inner', 'src/outer.spec.ts'],
      ["it's outer", 'outer', 'outer', 'src/file-attr.ts'],
    ]);
    expect(attempts[1]?.classname).toBe('Outer & Inner');
    expect(attempts[2]?.customId).toBe('trunk:abc-123');
    expect(attempts[5]?.line).toBeNull(); // line="0" is not a real line
  });

  it('reads durations and timestamps (offsets, zone-less as UTC, inherited from suites and the root)', () => {
    expect(attempts.map((a) => a.durationMs)).toEqual([null, 1_234_500, null, null, null, null]);
    expect(attempts[0]?.timestamp).toBe(Date.UTC(2024, 4, 6, 5, 8, 9));
    expect(attempts[1]?.timestamp).toBe(Date.UTC(2024, 4, 6, 10, 0, 0));
    expect(attempts[2]?.timestamp).toBe(Date.UTC(2024, 4, 6, 10, 0, 1, 500));
  });

  it('keeps the first failure, joins split CDATA, keeps multi-byte text and trims it', () => {
    expect(attempts[2]).toMatchObject({
      failureKind: 'failure',
      failureMessage: 'first',
      failureType: 'E1',
      failureText: 'Größe ✓ 🚀 <not a tag> ]]> end',
    });
    expect(attempts[4]).toMatchObject({
      failureKind: 'error',
      failureMessage: 'boom',
      failureType: 'RuntimeError',
      failureText: 'stack line 1\n  stack line 2',
    });
  });
});

describe('JUnit parser input handling', () => {
  const xml = '<testsuite name="s"><testcase name="ü 🚀" classname="c"/></testsuite>';

  it('accepts UTF-8 bytes, a UTF-8 BOM, and UTF-16 LE/BE files with a BOM', () => {
    const expected = parseText(xml).attempts;
    expect(expected).toHaveLength(1);
    const utf8 = Buffer.from(xml, 'utf8');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]);
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]);
    const be = Buffer.from(le);
    be.swap16();
    for (const bytes of [utf8, bom, le, be]) {
      const { attempts, summary } = parseChunks([bytes]);
      expect(summary.ok).toBe(true);
      expect(attempts).toEqual(expected);
    }
    expect(parseText(`\uFEFF${xml}`).attempts).toEqual(expected);
  });

  it('ignores child elements named like built-in object members (<toString>, <constructor>, …)', () => {
    const text =
      '<testsuite name="s"><testcase name="t"><toString/><constructor>x</constructor><__proto__/>' +
      '<hasOwnProperty/></testcase><testcase name="u"><valueOf/><failure>boom</failure></testcase></testsuite>';
    const { attempts, summary } = parseText(text);
    expect(summary.ok).toBe(true);
    expect(outline(attempts)).toEqual(['t passed#0', 'u failed#0']);
  });

  it('replaces raw control characters (ANSI colours) instead of rejecting the file', () => {
    const text =
      '<testsuite name="s"><testcase name="t"><failure>\u001b[31mred\u001b[0m</failure></testcase></testsuite>';
    const { attempts, summary } = parseText(text);
    expect(summary.ok).toBe(true);
    expect(attempts[0]?.failureText).toBe('\uFFFD[31mred\uFFFD[0m');
    expect(summary.problems).toEqual([
      { severity: 'warning', message: '2 control characters (e.g. ANSI escapes) replaced with U+FFFD' },
    ]);
  });

  it('hands attempts over in batches of batchSize, in file order', () => {
    const cases = Array.from({ length: 25 }, (_, i) => `<testcase name="t${i}"/>`).join('');
    const { attempts, batches } = parseText(`<testsuite name="s">${cases}</testsuite>`, { batchSize: 10 });
    expect(batches).toEqual([10, 10, 5]);
    expect(attempts.map((a) => a.caseIndex)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('refuses writes after close and returns the same summary on a second close', () => {
    const batches: number[] = [];
    const parser = createJunitParser({ onAttempts: (batch) => batches.push(batch.length) });
    parser.write(xml);
    expect(batches).toEqual([]); // the last partial batch waits for close()
    const summary = parser.close();
    expect(batches).toEqual([1]);
    expect(parser.close()).toBe(summary);
    expect(() => parser.write('<x/>')).toThrow(/after close/);
  });
});
