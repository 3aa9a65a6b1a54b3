// The byte decoder (ASCII runs copied, the rest through TextDecoder, in pieces) must give exactly
// what one TextDecoder gives, however the bytes are split.
import { describe, expect, it } from 'vitest';
import { createByteDecoder, hasControlByte } from '../../../src/lib/xml/decode.ts';
import { type Rng, seeded } from '../../support/random.ts';

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
