import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha1 } from '../../../src/lib/sha1.ts';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const nodeSha1 = (bytes: Uint8Array) => createHash('sha1').update(bytes).digest('hex');

describe('sha1', () => {
  it('matches the FIPS 180-4 examples', () => {
    const enc = new TextEncoder();
    expect(hex(sha1(enc.encode('abc')))).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(hex(sha1(new Uint8Array(0)))).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
    expect(hex(sha1(enc.encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '84983e441c3bd26ebaae4aa1f95129e5e54670f1',
    );
  });

  it('matches node:crypto for every length from 0 to 200 bytes (covers the 55/56/64 padding edges)', () => {
    for (let length = 0; length <= 200; length++) {
      const input = randomBytes(length);
      expect(hex(sha1(input)), `length ${length}`).toBe(nodeSha1(input));
    }
  });

  it('matches node:crypto on random multi-byte UTF-8 strings and large inputs', () => {
    const alphabet = ['a', 'é', '€', '日本', '🚀', '#', '/', ' ', '\n', 'Ω'];
    for (let i = 0; i < 300; i++) {
      let text = '';
      const parts = Math.floor(Math.random() * 60);
      for (let j = 0; j < parts; j++) text += alphabet[Math.floor(Math.random() * alphabet.length)];
      const bytes = new TextEncoder().encode(text);
      expect(hex(sha1(bytes)), JSON.stringify(text)).toBe(nodeSha1(bytes));
    }
    const big = randomBytes(1_000_003);
    expect(hex(sha1(big))).toBe(nodeSha1(big));
  });

  it('does not alter its input', () => {
    const input = Uint8Array.from([1, 2, 3]);
    sha1(input);
    expect([...input]).toEqual([1, 2, 3]);
  });
});
