// Shortcuts on the parser thread must never change what they compute: remembered test ids are the
// ids testCaseId gives, the guarded masks of normaliseLine give what running every mask would,
// and remembered failure facts are describeFailure's. (Fingerprints are stored: a different
// normalisation would split a test's failure groups.)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Derivation } from '../../src/app/ingest/prepare/derive.ts';
import { TestIdMemo } from '../../src/app/ingest/prepare/test-id-memo.ts';
import type { IdentityContext } from '../../src/app/ingest/prepare/types.ts';
import { describeFailure } from '../../src/domain/failures/index.ts';
import { MASKS, normaliseLine, stripAnsi } from '../../src/domain/failures/normalise.ts';
import type { JunitAttempt } from '../../src/domain/junit/index.ts';
import { testCaseId } from '../../src/domain/testid/index.ts';
import { failureTextHash } from '../../src/store/uploads/failure-texts.ts';

function everyMask(line: string): string {
  let result = stripAnsi(line);
  for (const [, pattern, mask] of MASKS) result = result.replace(pattern, mask);
  return result.replace(/\s+/g, ' ').trim();
}

/** Single characters the masks look for, and whole values they mask. */
const PIECES = [
  ...'aFxX07-:/\\"\'`@.~é()<>_=TZ \t',
  ...['2026-01-05', '12:34:56', 'C:\\', '\u001b[31m', 'http://', '0x1f', 'deadbeef42', '+02:00'],
  ...['de305d54-75b4-431b-adb2-eb6b9e546014', 'src/a.ts', '..'],
];

describe('normaliseLine', () => {
  it('gives what every mask run in order gives, on lines made of what the masks look for', () => {
    const lines = fc.array(fc.constantFrom(...PIECES), { maxLength: 25 }).map((p) => p.join(''));
    fc.assert(
      fc.property(lines, (line) => {
        expect(normaliseLine(line)).toBe(everyMask(line));
      }),
      { numRuns: 20_000 },
    );
  });

  it('masks what a stack line changes from run to run', () => {
    const line = '    at Object.<anonymous> (/home/runner/work/web/src/lib/a_12.ts:168:63) 0x7ffd "x"';
    expect(normaliseLine(line)).toBe('at Object.<anonymous> (<path>/a_<n>.ts:<n>:<n>) <addr> <str>');
  });
});

const A: IdentityContext = { orgSlug: 'acme', repoFullName: 'github.com/acme/web', variant: '' };
const B: IdentityContext = { orgSlug: 'acme', repoFullName: 'github.com/acme/api', variant: 'linux' };

type Identity = Pick<JunitAttempt, 'name' | 'classname' | 'file' | 'parent' | 'customId'>;

function expected(identity: IdentityContext, a: Identity): string {
  return testCaseId({ ...identity, ...a });
}

describe('TestIdMemo', () => {
  const optional = fc.option(fc.constantFrom('', 'a', 'b', 'a/b.ts', '\u0000'), { nil: null });
  const attempt = fc.record({
    name: fc.constantFrom('t', 'u', 'a\u0000b', 'a'),
    classname: optional,
    file: optional,
    parent: optional,
    customId: fc.option(fc.constantFrom('trunk:x', 'b', 'de305d54-75b4-531b-adb2-eb6b9e546014'), {
      nil: null,
    }),
  });

  it('answers the id testCaseId computes, for any mix of identities and repeats, also when full', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), attempt), { maxLength: 60 }),
        fc.integer({ min: 1, max: 8 }),
        (items, max) => {
          const memo = new TestIdMemo(max);
          for (const [useA, a] of items) {
            const identity = useA ? A : B;
            // The same identity object per file in real use; a copy must answer the same.
            const given = items.length % 2 === 0 ? identity : { ...identity };
            expect(memo.id(given, a as JunitAttempt)).toBe(expected(identity, a));
            expect(memo.size).toBeLessThanOrEqual(max);
          }
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('remembers: a suite seen again is answered without growing', () => {
    const memo = new TestIdMemo(1000);
    const suite = Array.from({ length: 50 }, (_, i) => ({
      name: `t${i}`,
      classname: `C${i % 3}`,
      file: 'a.ts',
      parent: null,
      customId: null,
    }));
    const first = suite.map((a) => memo.id(A, a as JunitAttempt));
    expect(memo.size).toBe(50);
    expect(suite.map((a) => memo.id({ ...A }, a as JunitAttempt))).toEqual(first);
    expect(memo.size).toBe(50);
    expect(first).toEqual(suite.map((a) => expected(A, a)));
  });
});

describe('failureFacts', () => {
  const derivation = new Derivation({ testIds: 1000, failingTests: 100, failureTexts: 20 });
  const failureFacts = (a: JunitAttempt, testId?: string) => derivation.failureFacts(a, testId);
  it("gives describeFailure's facts and the text's storage key, for texts seen before as for new ones", () => {
    const texts = fc
      .array(fc.constantFrom(...PIECES, '\n', '\n    at '), { maxLength: 30 })
      .map((p) => p.join(''));
    fc.assert(
      fc.property(fc.array(texts, { minLength: 1, maxLength: 8 }), (batch) => {
        // Each text twice: the second answer comes from what the thread remembers.
        for (const text of [...batch, ...batch]) {
          const attempt = { outcome: 'failed', failureText: text } as JunitAttempt;
          expect(failureFacts(attempt)).toEqual({
            ...describeFailure(text),
            textHash: failureTextHash(text),
          });
        }
      }),
      { numRuns: 2_000 },
    );
    expect(failureFacts({ outcome: 'passed' } as JunitAttempt)).toBeNull();
  });

  it('gives the facts of the text, not of the test’s last failure, when the test fails differently', () => {
    const texts = fc
      .array(fc.constantFrom(...PIECES, '\n', '\n    at '), { maxLength: 12 })
      .map((p) => p.join(''));
    const tests = fc.constantFrom('t1', 't2', 't3');
    fc.assert(
      fc.property(fc.array(fc.tuple(tests, texts), { minLength: 1, maxLength: 20 }), (failures) => {
        for (const [testId, text] of failures) {
          // A fresh copy of the text each time, as each upload decodes its own.
          const attempt = { outcome: 'failed', failureText: ` ${text}`.slice(1) } as JunitAttempt;
          expect(failureFacts(attempt, testId)).toEqual({
            ...describeFailure(text),
            textHash: failureTextHash(text),
          });
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
