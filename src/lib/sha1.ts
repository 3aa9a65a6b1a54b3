// SHA-1 (FIPS 180-4 §6.1) in plain TypeScript, so that domain code (test ids), which may not import
// node:crypto, can hash.
// Only used to build UUID v5 identifiers; not meant for anything security-related. Written for speed
// (an upload hashes every test's identity): no allocation besides the digest, 32-bit integer arithmetic.
// The buffers below are reused by every call (each thread has its own module instance).

/** The message schedule. */
const W = new Int32Array(80);
/** The running hash value H0..H4. */
const H = new Int32Array(5);
/** The last one or two blocks of the padded message (§5.1.1). */
const TAIL = new Uint8Array(128);

/** Returns the 20-byte SHA-1 digest of the first `length` bytes of `message` (default: all of it). */
export function sha1(message: Uint8Array, length: number = message.length): Uint8Array {
  H[0] = 0x67452301;
  H[1] = 0xefcdab89;
  H[2] = 0x98badcfe;
  H[3] = 0x10325476;
  H[4] = 0xc3d2e1f0;
  // Whole blocks are hashed straight from the message.
  const fullEnd = length - (length % 64);
  for (let offset = 0; offset < fullEnd; offset += 64) compress(message, offset);
  // The rest goes to TAIL with the padding: 0x80, zeros, then the 64-bit big-endian bit length.
  const rest = length - fullEnd;
  const tailLength = rest < 56 ? 64 : 128;
  for (let i = 0; i < rest; i++) TAIL[i] = message[fullEnd + i]!;
  TAIL[rest] = 0x80;
  TAIL.fill(0, rest + 1, tailLength - 8);
  // The bit length fits in 53 bits: the high word comes from a division, `>>> 0` keeps the low 32 bits.
  writeWord(TAIL, tailLength - 8, Math.floor(length / 0x20000000));
  writeWord(TAIL, tailLength - 4, (length * 8) >>> 0);
  compress(TAIL, 0);
  if (tailLength === 128) compress(TAIL, 64);
  const digest = new Uint8Array(20);
  for (let i = 0; i < 5; i++) writeWord(digest, i * 4, H[i]!);
  return digest;
}

/** Stores `word` big-endian at `bytes[offset..offset + 3]` (a Uint8Array store keeps the low 8 bits). */
function writeWord(bytes: Uint8Array, offset: number, word: number): void {
  bytes[offset] = word >>> 24;
  bytes[offset + 1] = word >>> 16;
  bytes[offset + 2] = word >>> 8;
  bytes[offset + 3] = word;
}

/** Hashes the 64-byte block at `bytes[offset..]` into H (§6.1.2). */
function compress(bytes: Uint8Array, offset: number): void {
  for (let t = 0, i = offset; t < 16; t++, i += 4) {
    W[t] = (bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!;
  }
  for (let t = 16; t < 80; t++) {
    const x = W[t - 3]! ^ W[t - 8]! ^ W[t - 14]! ^ W[t - 16]!;
    W[t] = (x << 1) | (x >>> 31);
  }
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let temp: number;
  // One loop per round function and constant, so no branch per round.
  for (let t = 0; t < 20; t++) {
    temp = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + W[t]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = temp;
  }
  for (let t = 20; t < 40; t++) {
    temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + W[t]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = temp;
  }
  for (let t = 40; t < 60; t++) {
    temp = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + W[t]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = temp;
  }
  for (let t = 60; t < 80; t++) {
    temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0xca62c1d6 + W[t]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = temp;
  }
  H[0] = H[0]! + a;
  H[1] = H[1]! + b;
  H[2] = H[2]! + c;
  H[3] = H[3]! + d;
  H[4] = H[4]! + e;
}
