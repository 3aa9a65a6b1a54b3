import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IntMap } from '../../../src/lib/int-map.ts';

// The queue state's PR map (domain/queue/types.ts) was a plain object with integer keys; IntMap replaced
// it and must behave as that object did: values and JSON in ascending key order, whatever the order of
// writes, so stored states and the engine's decisions stay as they were.
type Op = { kind: 'set'; k: number; v: number } | { kind: 'delete' | 'get'; k: number };

const key = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 40_000, max: 50_000 }));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), k: key, v: fc.integer() }),
  fc.record({ kind: fc.constant('delete' as const), k: key }),
  // Lookups between writes: the map remembers where the last one found its key (a hint that writes
  // may leave pointing elsewhere).
  fc.record({ kind: fc.constant('get' as const), k: key }),
);

describe('IntMap', () => {
  it('agrees with a plain object with integer keys after any writes', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const map = new IntMap<{ v: number }>();
        const object: Record<string, { v: number }> = {};
        for (const o of ops) {
          if (o.kind === 'set') {
            map.set(o.k, { v: o.v });
            object[o.k] = { v: o.v };
          } else if (o.kind === 'get') {
            expect(map.get(o.k)).toEqual(object[o.k]);
            expect(map.get(o.k + 7)).toEqual(object[o.k + 7]);
          } else {
            expect(map.delete(o.k)).toBe(o.k in object);
            delete object[o.k];
          }
        }
        expect(map.values()).toEqual(Object.values(object));
        expect(map.keys()).toEqual(Object.keys(object).map(Number));
        expect(map.size).toBe(Object.keys(object).length);
        expect(JSON.stringify(map)).toBe(JSON.stringify(object));
        for (let k = 0; k <= 41; k += 1) {
          expect(map.get(k)).toEqual(object[k]);
          expect(map.has(k)).toBe(k in object);
        }
        for (let i = 0; i < map.size; i += 1) expect(map.valueAt(i)).toBe(map.get(map.keyAt(i)));
        expect(IntMap.fromRecord(JSON.parse(JSON.stringify(map)))).toEqual(map);
      }),
    );
  });

  it('copies without sharing its arrays, and throws on a write once frozen', () => {
    const map = new IntMap<string>().set(40_014, 'b').set(40_007, 'a');
    const copy = map.copy().set(40_021, 'c');
    copy.delete(40_007);
    expect([...map]).toEqual([
      [40_007, 'a'],
      [40_014, 'b'],
    ]);
    expect([...copy]).toEqual([
      [40_014, 'b'],
      [40_021, 'c'],
    ]);
    const values = map.values();
    values.pop();
    expect(map.size).toBe(2);
    const frozen: { s: string }[] = [];
    const held = new IntMap<{ s: string }>().set(1, { s: 'x' }).freeze((v) => frozen.push(Object.freeze(v)));
    expect(frozen).toHaveLength(1);
    expect(() => held.set(2, { s: 'y' })).toThrow(TypeError);
    expect(() => held.delete(1)).toThrow(TypeError);
    expect(held.copy().set(2, { s: 'y' }).size).toBe(2);
  });

  it('counts its writes (what the engine keeps beside a map holds while the count stays): lookups and refused writes do not count', () => {
    const map = new IntMap<string>().set(1, 'a').set(2, 'b');
    expect(map.version).toBe(2);
    map.get(2);
    map.has(1);
    expect(map.version).toBe(2);
    map.delete(1);
    expect(map.version).toBe(3);
    expect(map.copy().version).toBe(0);
    map.freeze();
    expect(() => map.set(3, 'c')).toThrow(TypeError);
    expect(map.version).toBe(3);
  });

  it('finds keys evenly spaced and not, from any previous lookup', () => {
    const keys = Array.from({ length: 1000 }, (_, i) => 40_007 + 7 * i);
    const map = new IntMap<number>();
    for (const k of keys) map.set(k, k);
    map.set(39_000, 0).set(90_000, 1);
    for (const k of [...keys].reverse()) expect(map.get(k)).toBe(k);
    expect([39_000, 90_000, 40_007, 47_000].map((k) => map.get(k))).toEqual([0, 1, 40_007, 47_000]);
    for (const k of [0, 40_008, 46_999, 95_000]) expect(map.get(k)).toBeUndefined();
  });

  it('refuses a record key that is not an integer', () => {
    expect(() => IntMap.fromRecord({ '01': 1 })).toThrow(/not an integer/);
    expect(() => IntMap.fromRecord({ x: 1 })).toThrow(/not an integer/);
  });
});
