// SHA-1 (FIPS 180-4 §6.1) in plain TypeScript, because domain code may not import node:crypto.
// Only used to build UUID v5 identifiers; not meant for anything security-related. Written for speed
// (an upload hashes every test's identity): no allocation per block, 32-bit integer arithmetic.

/** The message schedule, reused by every call (the domain is single-threaded). */
const W = new Int32Array(80);

/** Returns the 20-byte SHA-1 digest of the first `length` bytes of `message` (default: all of it). */
export function sha1(message: Uint8Array, length: number = message.length): Uint8Array {
  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  const blocks = Math.ceil((length + 9) / 64);
  const bitLength = length * 8;
  for (let block = 0; block < blocks; block++) {
    const base = block * 64;
    for (let t = 0; t < 16; t++) {
      let word = 0;
      for (let k = 0; k < 4; k++)
        word = (word << 8) | paddedByte(message, length, blocks, bitLength, base + t * 4 + k);
      W[t] = word;
    }
    for (let t = 16; t < 80; t++) {
      const x = W[t - 3]! ^ W[t - 8]! ^ W[t - 14]! ^ W[t - 16]!;
      W[t] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    for (let t = 0; t < 80; t++) {
      let f: number;
      let k: number;
      if (t < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (t < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (t < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc | 0;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6 | 0;
      }
      const temp = (((a << 5) | (a >>> 27)) + f + e + k + W[t]!) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  const digest = new Uint8Array(20);
  const words = [h0, h1, h2, h3, h4];
  for (let i = 0; i < 5; i++) {
    const w = words[i]!;
    digest[i * 4] = w >>> 24;
    digest[i * 4 + 1] = (w >>> 16) & 0xff;
    digest[i * 4 + 2] = (w >>> 8) & 0xff;
    digest[i * 4 + 3] = w & 0xff;
  }
  return digest;
}

/** Byte `i` of the padded message (§5.1.1): the message, 0x80, zeros, the 64-bit big-endian bit length. */
function paddedByte(
  message: Uint8Array,
  length: number,
  blocks: number,
  bitLength: number,
  i: number,
): number {
  if (i < length) return message[i]!;
  if (i === length) return 0x80;
  const fromEnd = blocks * 64 - i;
  if (fromEnd > 8) return 0;
  // The bit length fits in 53 bits; bytes beyond the low 32 bits come from the high part.
  if (fromEnd > 4) return Math.floor(bitLength / 2 ** (8 * (fromEnd - 1))) & 0xff;
  return (bitLength >>> (8 * (fromEnd - 1))) & 0xff;
}
