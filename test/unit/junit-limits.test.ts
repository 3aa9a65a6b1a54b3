// Hostile and broken inputs: each is rejected or truncated with a clear problem.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createJunitParser } from '../../src/domain/junit/index.ts';
import { errorsOf, parseChunks, parseText } from './fixtures-junit/helpers.ts';

const suite = (body: string) => `<testsuite name="s">${body}</testsuite>`;

describe('DTDs and entities are never processed', () => {
  it('rejects billion laughs without expanding anything', () => {
    const entities = ['<!ENTITY lol "lol">'];
    for (let i = 1; i <= 9; i++) entities.push(`<!ENTITY lol${i} "${`&lol${i - 1 || ''};`.repeat(10)}">`);
    const xml = `<?xml version="1.0"?><!DOCTYPE lolz [${entities.join('')}]>${suite('<testcase name="&lol9;"/>')}`;
    const { attempts, summary } = parseText(xml);
    expect(summary.ok).toBe(false);
    expect(attempts).toEqual([]);
    expect(errorsOf(summary)).toEqual([
      'DOCTYPE/DTD declarations are not allowed in JUnit reports (entities are never expanded)',
    ]);
  });

  it('rejects an external entity (XXE) and a bare DOCTYPE', () => {
    const xxe = `<!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${suite('<testcase name="&xxe;"/>')}`;
    const bare = `<!DOCTYPE testsuite SYSTEM "junit.dtd">${suite('<testcase name="t"/>')}`;
    for (const xml of [xxe, bare]) {
      const { summary } = parseText(xml);
      expect(summary.ok).toBe(false);
      expect(errorsOf(summary)[0]).toMatch(/^DOCTYPE\/DTD declarations are not allowed/);
    }
  });

  it('stops a long prolog (comments before any element) at the prolog limit', () => {
    const parser = createJunitParser({ onAttempts: () => {} });
    const chunk = `<!-- ${'x'.repeat(65_000)} -->`;
    for (let i = 0; i < 40; i++) parser.write(chunk);
    const summary = parser.close();
    expect(summary.ok).toBe(false);
    expect(errorsOf(summary)).toEqual(['no root element within the first 1048576 characters']);
  });

  it('rejects an undefined entity reference as malformed', () => {
    const { summary } = parseText(suite('<testcase name="&nope;"/>'));
    expect(summary.ok).toBe(false);
    expect(errorsOf(summary)[0]).toMatch(/^malformed XML: .*undefined entity/i);
  });

  it('stops at the DOCTYPE of a huge DTD instead of buffering it', () => {
    const parser = createJunitParser({ onAttempts: () => {} });
    parser.write('<!DOCTYPE t [');
    const chunk = `<!-- ${'x'.repeat(65_000)} -->`;
    for (let i = 0; i < 40; i++) parser.write(chunk);
    const summary = parser.close();
    expect(summary.ok).toBe(false);
    expect(errorsOf(summary)).toEqual([
      'DOCTYPE/DTD declarations are not allowed in JUnit reports (entities are never expanded)',
    ]);
  });
});

describe('structure limits', () => {
  it('rejects nesting deeper than maxDepth with the position', () => {
    const xml = `${'<testsuite name="n">'.repeat(100)}${'</testsuite>'.repeat(100)}`;
    const { summary } = parseText(xml);
    expect(summary.ok).toBe(false);
    expect(summary.problems).toEqual([
      {
        severity: 'error',
        message: 'elements are nested more than 64 levels deep',
        line: 1,
        column: 20 * 65,
      },
    ]);
    expect(parseText(xml, { limits: { maxDepth: 100 } }).summary.ok).toBe(true);
  });

  it('rejects a file with more attempts than maxAttempts', () => {
    const xml = suite('<testcase name="a"/><testcase name="b"/><testcase name="c"/><testcase name="d"/>');
    const { summary } = parseText(xml, { limits: { maxAttempts: 3 } });
    expect(summary.ok).toBe(false);
    expect(errorsOf(summary)).toEqual(['the file has more than 3 test attempts']);
  });

  it('rejects a testcase with more retry elements than maxResultsPerTestcase', () => {
    const xml = suite(`<testcase name="t">${'<rerunFailure/>'.repeat(5)}</testcase>`);
    const { summary } = parseText(xml, { limits: { maxResultsPerTestcase: 4 } });
    expect(errorsOf(summary)).toEqual(['<testcase> has more than 4 result/retry elements']);
  });

  it('rejects a root that is not testsuites/testsuite', () => {
    const { summary } = parseText('<html><body><testcase name="t"/></body></html>');
    expect(summary.ok).toBe(false);
    expect(summary.problems).toEqual([
      {
        severity: 'error',
        message: 'root element is <html>, expected <testsuites> or <testsuite>',
        line: 1,
        column: 6,
      },
    ]);
  });

  it('rejects empty, blank and comment-only files, and gzip that was not decompressed', () => {
    expect(errorsOf(parseText('').summary)).toEqual(['the file is empty']);
    expect(errorsOf(parseChunks([]).summary)).toEqual(['the file is empty']);
    expect(errorsOf(parseText(' \n\t ').summary)).toEqual(['the file is empty']);
    expect(errorsOf(parseText('<?xml version="1.0"?><!-- nothing -->').summary)).toEqual([
      'no root element: expected <testsuites> or <testsuite>',
    ]);
    const gz = gzipSync(Buffer.from(suite('<testcase name="t"/>')));
    expect(errorsOf(parseChunks([gz]).summary)).toEqual([
      'the file looks gzip-compressed; decompress it before parsing',
    ]);
  });
});

describe('oversized values', () => {
  it('rejects a 2 MB attribute', () => {
    const xml = suite(`<testcase name="t"><failure message="${'m'.repeat(2_000_000)}"/></testcase>`);
    const { summary } = parseText(xml);
    expect(summary.ok).toBe(false);
    expect(errorsOf(summary)).toEqual([
      'attribute "message" on <failure> is 2000000 characters long (limit 1048576)',
    ]);
  });

  it('truncates long names (with a warning) and long messages (silently)', () => {
    const name = 'n'.repeat(5_000);
    const xml = suite(
      `<testcase name="${name}" classname="c"><failure message="${'m'.repeat(20_000)}"/></testcase>`,
    );
    const { attempts, summary } = parseText(xml);
    expect(summary.ok).toBe(true);
    expect(attempts[0]?.name).toBe('n'.repeat(1_000));
    expect(attempts[0]?.failureMessage).toHaveLength(8_000);
    expect(summary.problems).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: '<testcase> attribute "name" truncated from 5000 to 1000 characters',
      }),
    ]);
  });

  it('never splits a surrogate pair when truncating', () => {
    const xml = suite(`<testcase name="${'a'.repeat(999)}🚀tail"/>`);
    const name = parseText(xml).attempts[0]?.name ?? '';
    expect(name).toBe('a'.repeat(999));
  });

  it('truncates a huge failure body to 8,000 characters without an error', () => {
    const body = `start\n${'x'.repeat(5_000_000)}`;
    const { attempts, summary } = parseText(
      suite(`<testcase name="t"><failure>${body}</failure></testcase>`),
    );
    expect(summary.ok).toBe(true);
    expect(errorsOf(summary)).toEqual([]);
    expect(attempts[0]?.failureText).toHaveLength(8_000);
    expect(attempts[0]?.failureText?.startsWith('start\nxxx')).toBe(true);
  });

  it('rejects a single text node longer than maxTextChars', () => {
    const xml = suite(`<testcase name="t"><system-out>${'o'.repeat(2_000)}</system-out></testcase>`);
    const { summary } = parseText(xml, { limits: { maxTextChars: 1_000 } });
    expect(errorsOf(summary)).toEqual(['a text node is 2000 characters long (limit 1000)']);
  });

  it('caps the number of warnings kept', () => {
    const { summary } = parseText(suite('<testcase/>'.repeat(150)), { limits: { maxWarnings: 100 } });
    expect(summary.ok).toBe(true);
    expect(summary.problems).toHaveLength(101);
    expect(summary.problems.at(-1)).toEqual({ severity: 'warning', message: '50 more warnings not shown' });
  });
});

describe('malformed files and the discard contract', () => {
  it('reports an error at close for an unclosed document, after batches were already delivered', () => {
    const xml = `<testsuite name="s"><testcase name="a"/><testcase name="b"/><testcase name="c"/>`;
    const { batches, summary } = parseText(xml, { batchSize: 1 });
    expect(batches).toEqual([1, 1, 1]); // delivered before the error: the caller must discard them
    expect(summary.ok).toBe(false);
    expect(errorsOf(summary)).toEqual(['malformed XML: unclosed tag: testsuite']);
  });

  it('delivers nothing more after the first error, even if later chunks are valid', () => {
    const batches: number[] = [];
    const parser = createJunitParser({ batchSize: 2, onAttempts: (b) => batches.push(b.length) });
    parser.write(suite('<testcase name="a"/><testcase name="b"/><testcase name="c"/>').slice(0, -12));
    parser.write('<testcase name="x" name="dup"/>');
    parser.write('<testcase name="d"/></testsuite>');
    const summary = parser.close();
    expect(batches).toEqual([2]); // "c" was pending and is dropped
    expect(summary.ok).toBe(false);
    expect(summary.problems).toHaveLength(1);
    expect(summary.problems[0]).toMatchObject({ severity: 'error', line: 1 });
    expect(summary.problems[0]?.message).toMatch(/^malformed XML: .*duplicate attribute/);
  });

  it('rejects text after the root element and a second root', () => {
    expect(parseText(`${suite('')}garbage`).summary.ok).toBe(false);
    expect(parseText(`${suite('')}${suite('')}`).summary.ok).toBe(false);
  });
});
