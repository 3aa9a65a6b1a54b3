// The JUnit parser's speed-ups must not change what it reports: the helpers behind them give the
// same values as the straightforward code they replace, and limits still apply where text is skipped.
import { describe, expect, it } from 'vitest';
import { createRetryCounter } from '../../src/domain/junit/retry-counter.ts';
import { compact, detach, KeptText, optionalText, parseDurationMs } from '../../src/domain/junit/values.ts';
import { errorsOf, parseChunks, parseText } from './fixtures-junit/helpers.ts';

type Identity = {
  file: string | null;
  classname: string | null;
  parent: string | null;
  name: string;
  customId: string | null;
};

/** The numbering as first written: a Map keyed by the hash of the fields joined with U+0000. */
function referenceCounter(): (attempt: Identity) => number {
  const seen = new Map<number, number>();
  return (attempt) => {
    const fields = [attempt.file, attempt.classname, attempt.parent, attempt.name, attempt.customId];
    const text = fields.map((field) => field ?? '').join('\u0000');
    let a = 0x811c9dc5;
    let b = 0x2545f491;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x5bd1e995);
      b ^= b >>> 15;
    }
    a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
    b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
    const key = (b >>> 11) * 0x100000000 + (a >>> 0);
    const index = seen.get(key) ?? 0;
    seen.set(key, index + 1);
    return index;
  };
}

/** Old duration parsing (regexes only), to compare the fast path with. */
function referenceDurationMs(value: string | undefined): number | null {
  if (value === undefined) return null;
  let text = value.trim();
  if (/^\d{1,3}(,\d{3})+(\.\d*)?$/.test(text)) text = text.replaceAll(',', '');
  if (!/^[+]?(\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(text)) return null;
  const seconds = Number(text);
  if (!Number.isFinite(seconds)) return null;
  return Math.round(seconds * 1_000_000) / 1_000;
}

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

describe('retry counter', () => {
  it('numbers attempts exactly like the joined-string hash, across table growth and shared prefixes', () => {
    const rand = random(7);
    const pick = <T>(values: T[]): T => values[Math.floor(rand() * values.length)] as T;
    const counter = createRetryCounter();
    const reference = referenceCounter();
    for (let i = 0; i < 20_000; i++) {
      const attempt: Identity = {
        file: pick([null, '', 'a.ts', 'b/é.ts', `f${Math.floor(rand() * 5)}`]),
        classname: pick([null, 'C', 'D', '☕']),
        parent: pick([null, 'p', 'q']),
        name: pick(['t', '', `n${Math.floor(rand() * 3_000)}`, '😀 x']),
        customId: pick([null, null, '', 'id1', 'id\u00002']),
      };
      expect(counter.next(attempt)).toBe(reference(attempt));
    }
  });

  it('keeps identities apart that only a field boundary separates', () => {
    const counter = createRetryCounter();
    const base = { file: null, parent: null, customId: null };
    expect(counter.next({ ...base, classname: 'ab', name: 'c' })).toBe(0);
    expect(counter.next({ ...base, classname: 'a', name: 'bc' })).toBe(0);
    expect(counter.next({ ...base, classname: 'ab', name: 'c' })).toBe(1);
  });
});

describe('kept strings', () => {
  it('detach and compact return equal strings, including non-Latin-1 and surrogate pairs', () => {
    const chunk = `${'x'.repeat(50)}café ☕ 😀 ${'ÿ'.repeat(100)}\u0100`;
    for (const text of [
      '',
      'a',
      chunk,
      chunk.slice(3, 60),
      chunk.slice(50, 200),
      `${chunk.slice(0, 70)}<${chunk.slice(60)}`,
      'é'.repeat(80),
    ]) {
      expect(detach(text)).toBe(text);
      expect(compact(text)).toBe(text);
    }
  });

  it('KeptText gives what optionalText gives, for repeated and changing values', () => {
    const kept = new KeptText(5);
    for (const value of [
      undefined,
      '',
      'abc',
      'abc',
      'abcdefgh',
      'abcdefgh',
      'abcde',
      'abcde',
      '😀😀😀',
      'x',
    ]) {
      expect(kept.of(value)).toBe(optionalText(value, 5));
    }
  });
});

describe('parseDurationMs fast path', () => {
  it('agrees with the regex parsing', () => {
    const values = [
      '0',
      '0.',
      '1.',
      '.5',
      '1.202',
      '007',
      '1.2.3',
      '12345678901234567890',
      '123456789012345678901',
    ];
    values.push(
      '99999999999999999999.5',
      ' 2',
      '2 ',
      '1,234.5',
      '1e3',
      '-1',
      '+1',
      '',
      '.',
      '..',
      '1..',
      '0.0000004',
    );
    for (const value of values) expect(parseDurationMs(value), value).toBe(referenceDurationMs(value));
  });
});

describe('text that is not kept is still held to the text limit', () => {
  const limits = { maxTextChars: 10 };
  const long = 'y'.repeat(11);
  const cases = {
    'in system-out': `<testsuite><testcase name="a"><system-out>${long}</system-out></testcase></testsuite>`,
    'between elements': `<testsuite><testcase name="a"/>${long}<testcase name="b"/></testsuite>`,
    'after a comment': `<testsuite><system-out>a<!-- c -->${long}</system-out></testsuite>`,
    'after a processing instruction': `<testsuite><x>a<?pi x?>${long}</x></testsuite>`,
    'after CDATA': `<testsuite><x><![CDATA[a]]>${long}</x></testsuite>`,
    'with entities that shrink it': `<testsuite><x>${'&amp;'.repeat(4)}${'y'.repeat(7)}</x></testsuite>`,
  };

  it('reports the same error whether the text arrives whole or one character at a time', () => {
    for (const [label, xml] of Object.entries(cases)) {
      const whole = parseText(xml, { limits });
      const split = parseChunks([...xml], { limits });
      expect(whole.summary.ok, label).toBe(false);
      expect(errorsOf(whole.summary)[0], label).toMatch(/^a text node is 11 characters long \(limit 10\)$/);
      expect(split.summary, label).toEqual(whole.summary);
    }
  });

  it('accepts text within the limit once entities are decoded', () => {
    const xml = `<testsuite><testcase name="a"><system-out>${'&amp;'.repeat(10)}</system-out></testcase></testsuite>`;
    const { summary, attempts } = parseText(xml, { limits });
    expect(summary.ok).toBe(true);
    expect(attempts).toHaveLength(1);
  });
});
