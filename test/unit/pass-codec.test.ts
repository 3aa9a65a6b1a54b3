// An upload's passes as stored (store/uploads/pass-codec.ts): decoding gives back every pass, ordered by its
// test's ordinal with a test's own passes in the order they came, and passRange finds exactly a
// test's passes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeDetails,
  decodeOrdinals,
  encodePasses,
  type PassEntry,
  PassList,
  passRange,
} from '../../src/store/uploads/pass-codec.ts';

const BASE = Date.parse('2026-11-20T00:00:00Z');
const entry = fc.record({
  ordinal: fc.integer({ min: 0, max: 40 }),
  at: fc.integer({ min: BASE, max: BASE + 30 * 86_400_000 }),
  retryIndex: fc.integer({ min: 0, max: 5 }),
  durationMs: fc.option(fc.integer({ min: 0, max: 3_600_000 }), { nil: null }),
});

function decoded(entries: readonly PassEntry[]): PassEntry[] {
  const encoded = encodePasses(entries);
  const set = decodeOrdinals(encoded.ordinals, encoded.atMin, encoded.atMax);
  const details = decodeDetails(encoded.details, encoded.count);
  return [...set.ordinals].map((ordinal, i) => {
    const duration = details.durations[i] as number;
    return {
      ordinal,
      at: set.atMin + (details.atOffsets[i] as number),
      retryIndex: details.retries[i] as number,
      durationMs: duration < 0 ? null : duration,
    };
  });
}

describe('upload pass blobs', () => {
  it('give back every pass, by ordinal, a test’s passes in their order', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 200 }), (entries) => {
        // Array.prototype.sort is stable: the reference order.
        const expected = [...entries].sort((a, b) => a.ordinal - b.ordinal);
        expect(decoded(entries)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('find exactly a test’s passes', () => {
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 200 }),
        fc.integer({ min: -1, max: 42 }),
        (entries, ordinal) => {
          const encoded = encodePasses(entries);
          const set = decodeOrdinals(encoded.ordinals, encoded.atMin, encoded.atMax);
          const [from, to] = passRange(set.ordinals, ordinal);
          expect(to - from).toBe(entries.filter((e) => e.ordinal === ordinal).length);
          expect([...set.ordinals.subarray(from, to)].every((o) => o === ordinal)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('encode the same gathered in pieces, past the lists’ first capacity, as all at once', () => {
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 900, maxLength: 3000 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        (entries, cuts) => {
          const at = [...new Set(cuts.map((c) => c % entries.length))].sort((a, b) => a - b);
          const whole = new PassList();
          for (const e of entries) whole.push(e.ordinal, e.at, e.retryIndex, e.durationMs);
          const pieced = new PassList();
          let from = 0;
          for (const to of [...at, entries.length]) {
            const piece = new PassList();
            for (const e of entries.slice(from, to)) piece.push(e.ordinal, e.at, e.retryIndex, e.durationMs);
            pieced.append(piece);
            from = to;
          }
          expect(pieced.length).toBe(entries.length);
          expect(pieced.encode()).toEqual(whole.encode());
          expect(whole.encode()).toEqual(encodePasses(entries));
        },
      ),
      { numRuns: 30 },
    );
  });

  it('refuses passes spread over more time than an offset holds', () => {
    const passes = [
      { ordinal: 0, at: BASE, retryIndex: 0, durationMs: null },
      { ordinal: 1, at: BASE + 2 ** 32, retryIndex: 0, durationMs: null },
    ];
    expect(() => encodePasses(passes)).toThrow(/span more than/);
  });
});
