// Feeding a file in pieces must give exactly the same result as feeding it at once.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createJunitParser } from '../../src/domain/junit/index.ts';
import { SLICE_SPAN_CHARS } from '../../src/domain/junit/parser.ts';
import { seeded } from '../support/random.ts';
import type { ParseResult } from './fixtures-junit/helpers.ts';
import {
  parseChunks,
  parseText,
  readLocalFixture,
  readSharedFixture,
  SHARED_FIXTURES,
} from './fixtures-junit/helpers.ts';

const sharedNames = readdirSync(SHARED_FIXTURES).filter((name) => name.endsWith('.xml'));
const allFixtures = [
  ...sharedNames.map((name) => ({ name, text: readSharedFixture(name) })),
  { name: 'edge-cases.xml', text: readLocalFixture('edge-cases.xml') },
];

/** Everything observable except batch boundaries. */
const observable = (result: ParseResult) => ({ attempts: result.attempts, summary: result.summary });

function* pieces<T extends string | Uint8Array>(whole: T, size: number): Generator<T> {
  for (let i = 0; i < whole.length; i += size) yield whole.slice(i, i + size) as T;
}

function randomSplit<T extends string | Uint8Array>(whole: T, random: () => number, maxPiece: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < whole.length; ) {
    const size = 1 + Math.floor(random() * maxPiece);
    out.push(whole.slice(i, i + size) as T);
    i += size;
  }
  return out;
}

/** A synthetic report with retries, CDATA, entities, multi-byte names and big failure bodies. */
function syntheticReport(cases: number): string {
  const parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="synthetic">'];
  for (let i = 0; i < cases; i++) {
    if (i % 500 === 0)
      parts.push(`${i > 0 ? '</testsuite>' : ''}<testsuite name="suite ${i / 500} ✓" file="s${i}.ts">`);
    const name = `test &lt;${i % 700}&gt; 日本 🚀`;
    const body =
      i % 7 === 0 ? `<failure message="m &amp; ${i}"><![CDATA[trace ${'é'.repeat(i % 50)}]]></failure>` : '';
    const flaky =
      i % 11 === 0 ? `<flakyFailure type="T"><stackTrace>at x ${i}</stackTrace></flakyFailure>` : '';
    const skipped = i % 13 === 0 ? '<skipped/>' : '';
    parts.push(
      `\n<testcase name="${name}" classname="c${i % 3}" time="0.${i % 10}">${flaky}${body}${skipped}</testcase>`,
    );
  }
  parts.push('</testsuite></testsuites>\n');
  return parts.join('');
}

describe('chunked feeding', () => {
  it.each(allFixtures)('$name: one character or one byte at a time equals one shot', ({ text }) => {
    const once = observable(parseText(text));
    expect(observable(parseChunks(pieces(text, 1)))).toEqual(once);
    expect(observable(parseChunks(pieces(Buffer.from(text, 'utf8'), 1)))).toEqual(once);
  });

  const small = allFixtures.filter(({ text }) => text.length <= 3_100);

  it.each(small)('$name: split in two at every boundary (text and bytes) equals one shot', ({ text }) => {
    const once = observable(parseText(text));
    const bytes = Buffer.from(text, 'utf8');
    for (let i = 0; i <= text.length; i++) {
      expect(observable(parseChunks([text.slice(0, i), text.slice(i)])), `text split ${i}`).toEqual(once);
    }
    for (let i = 0; i <= bytes.length; i++) {
      expect(observable(parseChunks([bytes.subarray(0, i), bytes.subarray(i)])), `byte split ${i}`).toEqual(
        once,
      );
    }
  });

  it('a large synthetic file split at random points (text and bytes) equals one shot', () => {
    const text = syntheticReport(8_000);
    const once = observable(parseText(text));
    expect(once.summary.ok).toBe(true);
    expect(once.summary.counts.testcases).toBe(8_000);
    expect(once.summary.counts.retries).toBeGreaterThan(700);
    const random = seeded(42);
    for (let round = 0; round < 2; round++) {
      expect(observable(parseChunks(randomSplit(text, random, 70_000)))).toEqual(once);
      const bytes = Buffer.from(text, 'utf8');
      expect(observable(parseChunks(randomSplit(bytes, random, 70_000)))).toEqual(once);
    }
  });

  it('the malformed fixture fails at the same position however it is split', () => {
    const text = readSharedFixture('18-web-test-runner-template-MALFORMED.xml');
    const once = parseText(text).summary;
    const random = seeded(7);
    for (let round = 0; round < 20; round++) {
      expect(parseChunks(randomSplit(text, random, 200)).summary).toEqual(once);
    }
  });
});

describe('keepSlices (strings left as slices of the input, for a caller that copies batches out)', () => {
  it.each(allFixtures)('$name: the same attempts and summary as with every string copied', ({ text }) => {
    const random = seeded(3);
    const chunks = randomSplit(Buffer.from(text, 'utf8'), random, 4_000);
    expect(observable(parseChunks(chunks, { keepSlices: true }))).toEqual(observable(parseText(text)));
  });

  it('delivers a batch once SLICE_SPAN_CHARS of input went by, however few attempts it holds', () => {
    // Testcases far apart (large <system-out> between them): a batch must not wait for 1,000
    // attempts while its strings hold megabytes of input.
    const out = `<system-out>${'x'.repeat(1024 * 1024)}</system-out>`;
    const chunks = ['<testsuites><testsuite name="s">'];
    for (let i = 0; i < 20; i++) chunks.push(`<testcase name="t${i}">${out}</testcase>`);
    chunks.push('</testsuite></testsuites>');
    const sliced = parseChunks(chunks, { keepSlices: true });
    expect(sliced.summary.counts.testcases).toBe(20);
    const spanCases = Math.ceil(SLICE_SPAN_CHARS / out.length);
    expect(sliced.batches.length).toBeGreaterThanOrEqual(Math.floor(20 / spanCases));
    expect(Math.max(...sliced.batches)).toBeLessThanOrEqual(spanCases);
    // Without keepSlices the strings are copies: one batch at the end.
    expect(parseChunks(chunks).batches).toEqual([20]);
  });
});

describe('scale', () => {
  it('streams 100,000 testcases in bounded batches without the document or all attempts in memory', () => {
    const batches: number[] = [];
    let failed = 0;
    let retries = 0;
    const parser = createJunitParser({
      onAttempts(batch) {
        batches.push(batch.length);
        for (const attempt of batch) {
          if (attempt.outcome === 'failed') failed++;
          if (attempt.retryIndex > 0) retries++;
        }
      },
    });
    parser.write('<testsuites><testsuite name="big">');
    for (let i = 0; i < 100_000; i++) {
      const retry = i % 100 === 0 ? '<flakyFailure message="x"/>' : '';
      parser.write(`<testcase name="t${i}" classname="big.C" time="0.001">${retry}</testcase>`);
    }
    parser.write('</testsuite></testsuites>');
    expect(parser.close()).toEqual({
      ok: true,
      counts: { testcases: 100_000, attempts: 101_000, failures: 1_000, skipped: 0, retries: 1_000 },
      problems: [],
    });
    expect(Math.max(...batches)).toBe(1_000);
    expect(batches).toHaveLength(101);
    expect([failed, retries]).toEqual([1_000, 1_000]);
  });
});
