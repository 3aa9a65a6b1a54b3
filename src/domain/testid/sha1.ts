// SHA-1 (FIPS 180-4 §6.1) in plain TypeScript, because domain code may not import node:crypto.
// Only used to build UUID v5 identifiers; not meant for anything security-related.

const INITIAL_STATE = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0] as const;

/** Returns the 20-byte SHA-1 digest of `message`. */
export function sha1(message: Uint8Array): Uint8Array {
  const padded = padMessage(message);
  const view = new DataView(padded.buffer, padded.byteOffset, padded.byteLength);
  const state = Uint32Array.from(INITIAL_STATE);
  const schedule = new Uint32Array(80);
  for (let offset = 0; offset < padded.length; offset += 64) {
    compressBlock(state, schedule, view, offset);
  }
  const digest = new Uint8Array(20);
  const out = new DataView(digest.buffer);
  for (let i = 0; i < 5; i++) {
    out.setUint32(i * 4, state[i]!);
  }
  return digest;
}

/** Appends the 0x80 marker, zero bytes and the 64-bit big-endian bit length (§5.1.1). */
function padMessage(message: Uint8Array): Uint8Array {
  const blocks = Math.ceil((message.length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(message);
  padded[message.length] = 0x80;
  const view = new DataView(padded.buffer);
  const bitLength = message.length * 8;
  view.setUint32(padded.length - 8, Math.floor(bitLength / 0x100000000));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  return padded;
}

/** Processes one 512-bit block starting at `offset` (§6.1.2). */
function compressBlock(state: Uint32Array, w: Uint32Array, view: DataView, offset: number): void {
  for (let t = 0; t < 16; t++) {
    w[t] = view.getUint32(offset + t * 4);
  }
  for (let t = 16; t < 80; t++) {
    w[t] = rotl(w[t - 3]! ^ w[t - 8]! ^ w[t - 14]! ^ w[t - 16]!, 1);
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  for (let t = 0; t < 80; t++) {
    const temp = (rotl(a, 5) + roundFunction(t, b, c, d) + e + roundConstant(t) + w[t]!) >>> 0;
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = temp;
  }
  state[0] = state[0]! + a;
  state[1] = state[1]! + b;
  state[2] = state[2]! + c;
  state[3] = state[3]! + d;
  state[4] = state[4]! + e;
}

function rotl(x: number, n: number): number {
  return ((x << n) | (x >>> (32 - n))) >>> 0;
}

/** f_t from §4.1.1: Ch, Parity, Maj, Parity. */
function roundFunction(t: number, x: number, y: number, z: number): number {
  if (t < 20) return (x & y) ^ (~x & z);
  if (t < 40 || t >= 60) return x ^ y ^ z;
  return (x & y) ^ (x & z) ^ (y & z);
}

/** K_t from §4.2.1. */
function roundConstant(t: number): number {
  if (t < 20) return 0x5a827999;
  if (t < 40) return 0x6ed9eba1;
  if (t < 60) return 0x8f1bbcdc;
  return 0xca62c1d6;
}
