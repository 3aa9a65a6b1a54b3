import { describe, expect, it } from 'vitest';
import { WeighedLru } from '../../../src/lib/weighed-lru.ts';

describe('WeighedLru', () => {
  it('keeps the most recently used entries up to the total weight', () => {
    const lru = new WeighedLru<string>(10);
    lru.set('a', 'A', 4);
    lru.set('b', 'B', 4);
    expect(lru.get('a')).toBe('A'); // a is now the most recently used
    lru.set('c', 'C', 4); // 12 > 10: b goes
    expect(lru.get('b')).toBeUndefined();
    expect([lru.get('a'), lru.get('c')]).toEqual(['A', 'C']);
    lru.set('a', 'A2', 6); // replaced and weighed again: 6 + 4
    expect([lru.get('a'), lru.get('c')]).toEqual(['A2', 'C']);
  });

  it('keeps no entry heavier than the limit, and forgets on delete', () => {
    const lru = new WeighedLru<string>(10);
    lru.set('a', 'A', 3);
    lru.set('big', 'B', 11);
    expect(lru.get('big')).toBeUndefined();
    expect(lru.get('a')).toBe('A');
    lru.delete('a');
    expect(lru.get('a')).toBeUndefined();
    lru.set('x', 'X', 10);
    expect(lru.get('x')).toBe('X');
  });
});
