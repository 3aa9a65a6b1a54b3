// The parser's byte decoding (ASCII runs copied, the rest through TextDecoder, in pieces) and the
// thread codec must give exactly what one TextDecoder and plain attempt objects give.
import { describe, expect, it } from 'vitest';
import { AttemptEncoder, decodeAttempts, encodeAttempts } from '../../src/app/ingest/parsed-codec.ts';
import { createByteDecoder, hasControlByte } from '../../src/domain/junit/decode.ts';
import type { JunitAttempt } from '../../src/domain/junit/index.ts';
import { type Rng, seeded } from '../support/random.ts';
import { parseChunks } from './fixtures-junit/helpers.ts';

/** What the decoder did before pieces: one TextDecoder for the encoding the first two bytes name. */
function reference(bytes: Uint8Array): string {
  if (bytes.length < 2) return new TextDecoder('utf-8').decode(bytes);
  const encoding =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? 'utf-16le'
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? 'utf-16be'
        : 'utf-8';
  return new TextDecoder(encoding).decode(bytes);
}

function decodeInChunks(bytes: Uint8Array, sizes: () => number): string {
  const decoder = createByteDecoder();
  const out: string[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = sizes();
    decoder.decode(bytes.subarray(at, at + size), out);
    at += size;
  }
  out.push(decoder.flush());
  return out.join('');
}

const SEQUENCES: readonly number[][] = [
  [0xc3, 0xa9], // é
  [0xe2, 0x98, 0x95], // ☕
  [0xf0, 0x9f, 0x9a, 0x80], // 🚀
  [0xef, 0xbb, 0xbf], // BOM
  [0x80], // stray continuation
  [0xc0, 0x80], // overlong
  [0xed, 0xa0, 0x80], // surrogate
  [0xe2, 0x98], // truncated
  [0xf0, 0x9f], // truncated
  [0xff],
  [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
];

/** Mostly ASCII markup, with rare (or, by `dense`, frequent) multi-byte and invalid sequences. */
function randomBytes(random: Rng, length: number, dense: boolean): Uint8Array {
  const out: number[] = [];
  if (random() < 0.2) out.push(0xef, 0xbb, 0xbf);
  while (out.length < length) {
    const r = random();
    if (r < (dense ? 0.2 : 0.002))
      out.push(...(SEQUENCES[Math.floor(random() * SEQUENCES.length)] as number[]));
    else if (r < 0.07) out.push(0x3c);
    else if (r < 0.1) out.push(0x3e);
    else if (r < 0.12) out.push(0x0a);
    else out.push(0x20 + Math.floor(random() * 0x5f));
  }
  return Uint8Array.from(out);
}

describe('byte decoding', () => {
  it('finds control bytes as the regular expression finds control characters', () => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching these characters is the point.
    const controls = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
    const random = seeded(3);
    const buffer = new Uint8Array(4096);
    for (let round = 0; round < 2000; round++) {
      const length = Math.floor(random() * 200);
      const offset = Math.floor(random() * 8);
      const bytes = buffer.subarray(offset, offset + length);
      for (let k = 0; k < length; k++) {
        const r = random();
        bytes[k] =
          r < 0.3
            ? ([0x09, 0x0a, 0x0d, 0x20, 0x1f, 0x80, 0xff][Math.floor(random() * 7)] as number)
            : 0x21 + Math.floor(random() * 0x5e);
      }
      if (round % 3 === 0 && length > 0) bytes[Math.floor(random() * length)] = Math.floor(random() * 0x20);
      expect(hasControlByte(bytes)).toBe(controls.test(Buffer.from(bytes).toString('latin1')));
    }
  });

  it('gives the text one TextDecoder gives, however the bytes are split', () => {
    const random = seeded(11);
    for (let round = 0; round < 300; round++) {
      const length = Math.floor(random() * (round % 3 === 0 ? 40_000 : 3_000));
      const bytes = randomBytes(random, length, round % 4 === 0);
      const expected = reference(bytes);
      const maxPiece = [1, 7, 5_000, 20_000, 100_000][round % 5] as number;
      expect(decodeInChunks(bytes, () => 1 + Math.floor(random() * maxPiece))).toBe(expected);
    }
  });

  it('keeps non-ASCII bytes that straddle blocks and chunks whole', () => {
    const random = seeded(5);
    for (let round = 0; round < 200; round++) {
      // ASCII blocks with a "<" right after a multi-byte or cut sequence at a 4 KB boundary.
      const bytes = new Uint8Array(16_384).fill(0x61);
      for (let k = 0; k < 6; k++) {
        const at = 4096 * (1 + Math.floor(random() * 3)) - Math.floor(random() * 4);
        const sequence = SEQUENCES[Math.floor(random() * SEQUENCES.length)] as number[];
        bytes.set(sequence, at);
        bytes[at + sequence.length] = 0x3c;
      }
      const size = 1 + Math.floor(random() * 9_000);
      expect(decodeInChunks(bytes, () => size)).toBe(reference(bytes));
    }
  });

  it('handles UTF-16 files and a BOM cut after its first byte', () => {
    const text = '\uFEFF<testsuite name="日本 ☕"/>';
    for (const bytes of [
      Buffer.from(text, 'utf16le'),
      Buffer.from(Buffer.from(text, 'utf16le')).swap16(),
      Buffer.from(text, 'utf8'),
    ]) {
      const view = new Uint8Array(bytes);
      for (const size of [1, 2, 3, 5, 1000]) expect(decodeInChunks(view, () => size)).toBe(reference(view));
    }
  });
});

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
