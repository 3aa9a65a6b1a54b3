// Parsing bytes in pieces and the thread codec must give exactly what parsing the text at once and
// plain attempt objects give (the byte decoder itself: test/unit/lib/xml-decode.test.ts).
import { describe, expect, it } from 'vitest';
import { AttemptEncoder, decodeAttempts, encodeAttempts } from '../../src/app/ingest/parsing/codec.ts';
import type { JunitAttempt } from '../../src/domain/junit/index.ts';
import { seeded } from '../support/random.ts';
import { parseChunks } from './fixtures-junit/helpers.ts';

/** A report whose non-ASCII characters are rare: most 4 KB blocks are ASCII, some are not. */
function sparseReport(cases: number): string {
  const parts = ['<?xml version="1.0"?>\r\n<testsuites>'];
  for (let i = 0; i < cases; i++) {
    if (i % 150 === 0)
      parts.push(`${i > 0 ? '</testsuite>' : ''}<testsuite name="suite › ${i}" file="s.ts">`);
    const name = i % 37 === 0 ? `café ☕ &amp; 🚀 ${i}` : `renders the &quot;thing&quot; ${i}`;
    const failure =
      i % 9 === 0
        ? `<failure message="boom ${i % 4}" type="E">at x\r\n${'line of trace\n'.repeat(i % 40)}\u001b[31m${i % 53 === 0 ? 'é' : ''}</failure>`
        : '';
    parts.push(`\n  <testcase name="${name}" classname="C${i % 5}" time="0.${i % 10}">${failure}</testcase>`);
  }
  parts.push('</testsuite></testsuites>\n');
  return parts.join('');
}

describe('parsing bytes in pieces', () => {
  const text = sparseReport(3000);
  const bytes = Buffer.from(text, 'utf8');
  const once = parseChunks([text]);

  it('gives the same attempts and summary as the text at once', () => {
    expect(once.summary.ok).toBe(true);
    expect(once.summary.counts.testcases).toBe(3000);
    const random = seeded(9);
    for (const maxPiece of [70_000, 300_000, 5_000]) {
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(random() * maxPiece);
        chunks.push(new Uint8Array(bytes.subarray(at, at + size)));
        at += size;
      }
      const sliced = parseChunks(chunks, { keepSlices: true });
      expect(sliced.attempts).toEqual(once.attempts);
      expect(sliced.summary).toEqual(once.summary);
    }
  });

  it('reports an error at the end of the input where the text at once reports it', () => {
    // Cut inside a failure body: "unclosed tag" at the end of the data, after many chunks.
    const cut = text.slice(0, text.indexOf('line of trace', 200_000) + 5);
    const whole = parseChunks([cut]).summary;
    expect(whole.problems.find((p) => p.severity === 'error')).toMatchObject({
      severity: 'error',
      message: 'malformed XML: unclosed tag: failure',
    });
    const data = Buffer.from(cut, 'utf8');
    for (const size of [4096, 65_536]) {
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < data.length; at += size) chunks.push(data.subarray(at, at + size));
      expect(parseChunks(chunks).summary).toEqual(whole);
      expect(
        parseChunks(
          chunks.map((c) => Buffer.from(c).toString('latin1')),
          {},
        ).summary.problems.at(-1),
      ).toEqual(parseChunks([data.toString('latin1')]).summary.problems.at(-1));
    }
  });

  it('gives the same attempts to a writer, through the thread codec', () => {
    const encoder = new AttemptEncoder(64);
    const decoded: JunitAttempt[] = [];
    const batches: number[] = [];
    const result = parseChunks([bytes.subarray(0, 100_000), bytes.subarray(100_000)], {
      keepSlices: true,
      batchSize: 500,
      writer: {
        add: (attempt) => encoder.add(attempt),
        flush: () => {
          batches.push(encoder.count);
          decoded.push(...decodeAttempts(encoder.take()));
        },
      },
    });
    expect(result.attempts).toEqual([]);
    expect(result.summary).toEqual(once.summary);
    expect(decoded).toEqual(once.attempts);
    expect(Math.max(...batches)).toBe(500);
  });
});

describe('thread codec', () => {
  const attempt = (over: Partial<JunitAttempt>): JunitAttempt => ({
    name: 'n',
    classname: null,
    file: null,
    parent: null,
    suite: null,
    customId: null,
    line: null,
    outcome: 'passed',
    failureKind: null,
    failureMessage: null,
    failureType: null,
    failureText: null,
    durationMs: null,
    timestamp: null,
    retryIndex: 0,
    source: 'testcase',
    caseIndex: 0,
    ...over,
  });

  it('round-trips every field and every kind of string', () => {
    const attempts = [
      attempt({}),
      attempt({
        name: 'a\u0000b 日本 🚀',
        classname: 'café',
        file: '',
        parent: 'p',
        suite: 's',
        customId: 'id',
        line: 12,
        outcome: 'failed',
        failureKind: 'error',
        failureMessage: 'ÿ'.repeat(100),
        failureType: '☕',
        failureText: `${'x'.repeat(5000)}\u{1F680}`,
        durationMs: 1.5,
        timestamp: 1_700_000_000_000,
        retryIndex: 3,
        source: 'rerun',
        caseIndex: 7,
      }),
      attempt({
        name: 'café',
        classname: 'café',
        outcome: 'skipped',
        source: 'flaky',
        failureKind: 'failure',
      }),
      attempt({ name: '', durationMs: 0, timestamp: -1, failureText: '' }),
    ];
    expect(decodeAttempts(encodeAttempts(attempts))).toEqual(attempts);
    expect(decodeAttempts(encodeAttempts([]))).toEqual([]);
  });

  it('starts afresh after each take, growing past its first capacity', () => {
    const encoder = new AttemptEncoder(2, 8);
    const first = Array.from({ length: 50 }, (_, i) =>
      attempt({ name: `t${i} ${'y'.repeat(i)}`, classname: `c${i % 3}`, failureMessage: i % 2 ? 'm' : null }),
    );
    for (const a of first) encoder.add(a);
    expect(decodeAttempts(encoder.take())).toEqual(first);
    const second = [attempt({ name: 'ü', classname: 'c1' })];
    for (const a of second) encoder.add(a);
    expect(decodeAttempts(encoder.take())).toEqual(second);
  });
});
