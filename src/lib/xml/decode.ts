// Incremental bytes → text decoding: UTF-8 by default, UTF-16 when the file starts with a BOM.
import { isAscii } from 'node:buffer';

export interface ByteDecoder {
  /**
   * Decodes the next bytes into `out`, in one or more pieces (in order) that together are the
   * text the bytes make after those before them. Returns false when that text is known to hold no
   * C0 control character other than tab, line feed and carriage return (so a pass replacing
   * them would change nothing), true when it may.
   */
  decode(bytes: Uint8Array, out: string[]): boolean;
  /** Returns whatever is still buffered (e.g. an incomplete final character, as U+FFFD). */
  flush(): string;
}

/**
 * UTF-8 is read in blocks of this many bytes. A run of blocks of ASCII only (most of a report)
 * becomes one piece copied one byte per character (`latin1`: the same characters), faster than
 * TextDecoder; TextDecoder decodes the rest. Pieces matter beyond that: V8 stores a string
 * at two bytes per character as soon as one character needs it (one emoji in a test name), and so
 * every slice the parser then cuts from it, which makes the whole parse slower (docs/benchmarks.md,
 * "Figures from source comments"). A piece of ASCII starts at a "<" or after a ">", where the
 * scanner usually holds nothing back from the piece before (which would be joined to it).
 */
const BLOCK = 4096;

/** The encoding is chosen from the first two bytes, so they are held back until both have arrived. */
export function createByteDecoder(): ByteDecoder {
  let decoder: InstanceType<typeof TextDecoder> | null = null;
  let utf8 = false;
  /**
   * UTF-8: whether the decoder may hold the start of a character (the last byte it got was not
   * ASCII), so that the next bytes must go to it too. Once it has given any text, it no longer
   * looks for a BOM, so bytes it does not see change nothing else.
   */
  let pending = false;
  let ascii = new Uint8Array(0);
  let head = new Uint8Array(0);
  const start = (bytes: Uint8Array, out: string[]): boolean => {
    const joined = new Uint8Array(head.length + bytes.length);
    joined.set(head);
    joined.set(bytes, head.length);
    head = joined;
    if (head.length < 2) return false;
    const all = head;
    head = new Uint8Array(0);
    const encoding = encodingFromBom(all);
    decoder = new TextDecoder(encoding);
    utf8 = encoding === 'utf-8';
    if (!utf8) {
      out.push(decoder.decode(all, { stream: true }));
      return true;
    }
    // The decoder gets the first bytes (and drops a BOM there), then the rest like any chunk.
    const first = Math.min(all.length, 4);
    out.push(decoder.decode(all.subarray(0, first), { stream: true }));
    pending = (all[first - 1] as number) >= 0x80;
    decodeUtf8(decoder, all.subarray(first), out);
    return hasControlByte(all);
  };
  const decodeUtf8 = (active: InstanceType<typeof TextDecoder>, chunk: Uint8Array, out: string[]): void => {
    let bytes = chunk;
    if (!pending) {
      // The text up to the first "<" mostly ends a tag the chunk before began, which the scanner
      // joins to it (a copy): on its own, it leaves the rest with nothing to join.
      const lt = bytes.subarray(0, BLOCK).indexOf(0x3c);
      if (lt > 0 && isAscii(bytes.subarray(0, lt))) {
        out.push(Buffer.from(bytes.buffer, bytes.byteOffset, lt).toString('latin1'));
        bytes = bytes.subarray(lt);
      }
    }
    const n = bytes.length;
    if (n === 0) return;
    const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, n);
    if (!pending && isAscii(bytes)) {
      out.push(latin1.toString('latin1', 0, n));
      return;
    }
    const blocks = Math.ceil(n / BLOCK);
    if (ascii.length < blocks) ascii = new Uint8Array(blocks);
    for (let b = 0; b < blocks; b++)
      ascii[b] = isAscii(bytes.subarray(b * BLOCK, Math.min(n, (b + 1) * BLOCK))) ? 1 : 0;
    /** The first byte of `bytes` at or after `from` that is not ASCII, or `n`. */
    const nextNonAscii = (from: number): number => {
      for (let b = Math.floor(from / BLOCK); b < blocks; b++) {
        const end = Math.min(n, (b + 1) * BLOCK);
        if (ascii[b] === 0) {
          const first = firstNonAscii(bytes, Math.max(from, b * BLOCK), end);
          if (first < end) return first;
        }
      }
      return n;
    };
    let at = 0;
    while (at < n) {
      if (!pending) {
        const first = nextNonAscii(at);
        if (first > at) out.push(latin1.toString('latin1', at, first));
        at = first;
        if (at >= n) break;
      }
      // To the decoder, from a byte that is not ASCII (or that the decoder is waiting for): the
      // blocks that are not ASCII from there, then up to the first "<" or just past the first ">"
      // after their last such byte (where a tag starts or, mostly, ends).
      let e = Math.floor(at / BLOCK);
      while (e + 1 < blocks && ascii[e + 1] === 0) e++;
      const last = Math.max(
        at,
        ascii[e] === 0 ? lastNonAscii(bytes, Math.max(at, e * BLOCK), Math.min(n, (e + 1) * BLOCK)) : at,
      );
      // Looked for within a block's length (each search then costs no more than the bytes decoded).
      const limit = Math.min(n, last + 1 + BLOCK);
      // Not right after a byte that is not ASCII: the decoder may wait for more of its character.
      const from = last + ((bytes[last] as number) >= 0x80 ? 2 : 1);
      const lt = from >= limit ? -1 : bytes.subarray(from, limit).indexOf(0x3c);
      const cut = lt === -1 ? limit : from + lt;
      const gt = bytes.subarray(last + 1, cut).indexOf(0x3e);
      const end = gt === -1 ? cut : last + 2 + gt;
      out.push(active.decode(bytes.subarray(at, end), { stream: true }));
      pending = (bytes[end - 1] as number) >= 0x80;
      at = end;
    }
  };
  return {
    decode(bytes, out) {
      if (decoder === null) return start(bytes, out);
      if (!utf8) {
        out.push(decoder.decode(bytes, { stream: true }));
        return true;
      }
      decodeUtf8(decoder, bytes, out);
      // In UTF-8 a byte below 0x20 is always that character (never part of another one, valid or not).
      return hasControlByte(bytes);
    },
    flush() {
      if (decoder !== null) return decoder.decode();
      const rest = new TextDecoder('utf-8').decode(head);
      head = new Uint8Array(0);
      return rest;
    },
  };
}

/** 1 for the bytes of C0 control characters other than tab, line feed and carriage return. */
const CONTROL = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) if (b !== 0x09 && b !== 0x0a && b !== 0x0d) CONTROL[b] = 1;
const BELOW_SPACE = 0x20202020;
const HIGH_BITS = 0x80808080;
const EMPTY_WORDS = new Uint32Array(0);

/**
 * Whether `bytes` hold a CONTROL byte; faster than the regular expression over the text. Reads four bytes at a time: `(w - 0x20202020) & ~w & 0x80808080` is not 0 when a byte
 * of `w` is below 0x20 (line feeds, mostly), and only then are its bytes looked up.
 */
export function hasControlByte(bytes: Uint8Array): boolean {
  const n = bytes.length;
  let i = Math.min(n, (4 - (bytes.byteOffset & 3)) & 3);
  for (let k = 0; k < i; k++) if (CONTROL[bytes[k] as number] === 1) return true;
  const count = (n - i) >>> 2;
  const words = count === 0 ? EMPTY_WORDS : new Uint32Array(bytes.buffer, bytes.byteOffset + i, count);
  let k = 0;
  for (; k + 1 < count; k += 2) {
    const w = words[k] as number;
    const x = words[k + 1] as number;
    if (
      ((((w - BELOW_SPACE) & ~w) | ((x - BELOW_SPACE) & ~x)) & HIGH_BITS) !== 0 &&
      ((CONTROL[w & 0xff] as number) |
        (CONTROL[(w >>> 8) & 0xff] as number) |
        (CONTROL[(w >>> 16) & 0xff] as number) |
        (CONTROL[w >>> 24] as number) |
        (CONTROL[x & 0xff] as number) |
        (CONTROL[(x >>> 8) & 0xff] as number) |
        (CONTROL[(x >>> 16) & 0xff] as number) |
        (CONTROL[x >>> 24] as number)) !==
        0
    )
      return true;
  }
  for (i += k * 4; i < n; i++) if (CONTROL[bytes[i] as number] === 1) return true;
  return false;
}

/** Bisects with `isAscii` down to this many bytes, then looks at each. */
const SCAN = 32;

/** The first byte in `bytes[from, to)` that is not ASCII, or `to`. */
function firstNonAscii(bytes: Uint8Array, from: number, to: number): number {
  let lo = from;
  let hi = to;
  // [from, lo) is ASCII; the first other byte, if any, is in [lo, hi).
  while (hi - lo > SCAN) {
    const mid = (lo + hi) >>> 1;
    if (isAscii(bytes.subarray(lo, mid))) lo = mid;
    else hi = mid;
  }
  for (let k = lo; k < hi; k++) if ((bytes[k] as number) >= 0x80) return k;
  return to;
}

/** The last byte in `bytes[from, to)` that is not ASCII, or `from - 1`. */
function lastNonAscii(bytes: Uint8Array, from: number, to: number): number {
  let lo = from;
  let hi = to;
  // [hi, to) is ASCII; the last other byte, if any, is in [lo, hi).
  while (hi - lo > SCAN) {
    const mid = (lo + hi) >>> 1;
    if (isAscii(bytes.subarray(mid, hi))) hi = mid;
    else lo = mid;
  }
  for (let k = hi - 1; k >= lo; k--) if ((bytes[k] as number) >= 0x80) return k;
  return from - 1;
}

function encodingFromBom(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}
