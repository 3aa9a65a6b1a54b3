import { describe, expect, it } from 'vitest';
import { Lru } from '../../../src/lib/lru.ts';

describe('Lru', () => {
  it('drops the least recently used entry beyond its size', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([undefined, 2, 3]);
  });

  it('counts a read as a use, so the entry read last survives', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([1, undefined, 3]);
  });

  it('replaces a value in place and forgets a deleted key', () => {
    const lru = new Lru<string>(2);
    lru.set('a', 'old');
    lru.set('a', 'new');
    lru.set('b', 'b');
    expect(lru.get('a')).toBe('new');
    lru.delete('a');
    expect(lru.get('a')).toBeUndefined();
    expect(lru.get('b')).toBe('b');
  });

  it('reads the newest entry again without reordering the others', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect([lru.get('b'), lru.get('b')]).toEqual([2, 2]);
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([undefined, 2, 3]);
  });

  it('still moves an older entry read after the newest one', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.get('b');
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect([lru.get('b'), lru.get('a'), lru.get('c')]).toEqual([undefined, 1, 3]);
  });

  it('moves the entry that was newest before another was read', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect([lru.get('a'), lru.get('b')]).toEqual([1, 2]);
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([undefined, 2, 3]);
  });

  it('forgets a deleted newest entry and keeps nothing at size 0', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.delete('b');
    expect(lru.get('b')).toBeUndefined();
    lru.set('c', 3);
    lru.set('d', 4);
    expect([lru.get('a'), lru.get('c'), lru.get('d')]).toEqual([undefined, 3, 4]);
    const none = new Lru<number>(0);
    none.set('a', 1);
    expect(none.get('a')).toBeUndefined();
  });
});
