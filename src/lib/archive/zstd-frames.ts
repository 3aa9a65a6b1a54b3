/**
 * Walks the frame and block headers of a zstd stream (RFC 8878 §3.1) ahead of the decoder, so that
 * hostile headers are refused, with a message saying why, before the decoder acts on them: a decoder
 * allocates whatever window a frame declares (up to 2 GiB); dictionaries are not supported; a block
 * may not declare more than the format's 128 KiB.
 * Block contents are skipped, not decoded.
 */
import { fail, formatBytes, OK, type Verdict } from './verdict.ts';

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const MAX_BLOCK_BYTES = 128 * 1024;
const DICT_ID_BYTES = [0, 1, 2, 4] as const;

type Phase =
  /** Expecting a frame's 4-byte magic number. */
  | 'magic'
  /** Expecting a skippable frame's 4-byte length. */
  | 'skippable-size'
  /** Expecting a zstd frame header (after the magic). */
  | 'frame-header'
  /** Expecting a 3-byte block header. */
  | 'block-header';

export interface FrameLimits {
  readonly maxWindowBytes: number;
  readonly maxTotalBytes: number;
}

function u32le(b: Uint8Array, at = 0): number {
  return ((b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24)) >>> 0;
}

/** Little-endian unsigned integer of `n` bytes, exact up to 2^53. */
function uintLe(b: Uint8Array, at: number, n: number): number {
  let value = 0;
  for (let i = n - 1; i >= 0; i--) value = value * 256 + (b[at + i] ?? 0);
  return value;
}

function frameHeaderLength(descriptor: number): number {
  const singleSegment = (descriptor >> 5) & 1;
  const fcsFlag = descriptor >> 6;
  const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
  return 1 + (singleSegment ? 0 : 1) + (DICT_ID_BYTES[descriptor & 3] ?? 0) + fcsBytes;
}

export class ZstdFrameScanner {
  private phase: Phase = 'magic';
  private readonly buf = new Uint8Array(18);
  private have = 0;
  private skip = 0;
  private nextPhase: Phase = 'magic';
  private blockMax = 0;
  private checksumBytes = 0;
  private frames = 0;

  constructor(private readonly limits: FrameLimits) {}

  /** Checks the headers in `chunk`; call before handing the same chunk to the decoder. */
  scan(chunk: Uint8Array): Verdict {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        if (this.skip === 0) this.phase = this.nextPhase;
        continue;
      }
      const want = this.wanted();
      const n = Math.min(want - this.have, chunk.length - i);
      this.buf.set(chunk.subarray(i, i + n), this.have);
      this.have += n;
      i += n;
      if (this.have < this.wanted()) continue;
      this.have = 0;
      const verdict = this.complete();
      if (!verdict.ok) return verdict;
    }
    return OK;
  }

  /** The stream has ended: it must end between frames. */
  end(): Verdict {
    if (this.phase === 'magic' && this.have === 0 && this.skip === 0 && this.frames > 0) return OK;
    return fail('corrupt', 'truncated zstd data: the stream ends inside a frame');
  }

  private wanted(): number {
    if (this.phase === 'block-header') return 3;
    if (this.phase !== 'frame-header') return 4;
    return this.have === 0 ? 1 : frameHeaderLength(this.buf[0] ?? 0);
  }

  private complete(): Verdict {
    switch (this.phase) {
      case 'magic':
        return this.onMagic(u32le(this.buf));
      case 'skippable-size':
        this.skipThen(u32le(this.buf), 'magic');
        return OK;
      case 'frame-header':
        return this.onFrameHeader();
      case 'block-header':
        return this.onBlockHeader();
    }
  }

  private skipThen(bytes: number, next: Phase): void {
    this.skip = bytes;
    this.nextPhase = next;
    this.phase = bytes === 0 ? next : this.phase;
  }

  private onMagic(magic: number): Verdict {
    if (magic === ZSTD_MAGIC) {
      this.phase = 'frame-header';
      return OK;
    }
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      this.phase = 'skippable-size';
      return OK;
    }
    return fail('corrupt', `corrupt zstd data: no frame magic number after frame ${this.frames}`);
  }

  private onFrameHeader(): Verdict {
    const descriptor = this.buf[0] ?? 0;
    if (descriptor & 0x08) return fail('corrupt', 'corrupt zstd data: reserved bit set in a frame header');
    const singleSegment = (descriptor >> 5) & 1;
    const dictBytes = DICT_ID_BYTES[descriptor & 3] ?? 0;
    const dictAt = singleSegment ? 1 : 2;
    if (uintLe(this.buf, dictAt, dictBytes) !== 0) {
      return fail('unsupported_format', 'zstd frames compressed with a dictionary are not supported');
    }
    const fcsBytes = frameHeaderLength(descriptor) - dictAt - dictBytes;
    const declared =
      fcsBytes === 0
        ? undefined
        : uintLe(this.buf, dictAt + dictBytes, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
    if (declared !== undefined && declared > this.limits.maxTotalBytes) {
      return fail(
        'too_large',
        `zstd frame declares ${declared} decompressed bytes; the limit is ${formatBytes(this.limits.maxTotalBytes)}`,
      );
    }
    const window = singleSegment ? (declared ?? 0) : windowSize(this.buf[1] ?? 0);
    if (window > this.limits.maxWindowBytes) {
      return fail(
        'too_large',
        `zstd window of ${formatBytes(window)} exceeds the limit of ${formatBytes(this.limits.maxWindowBytes)} (compress without --long/--ultra)`,
      );
    }
    this.blockMax = Math.min(window, MAX_BLOCK_BYTES);
    this.checksumBytes = (descriptor >> 2) & 1 ? 4 : 0;
    this.frames++;
    this.phase = 'block-header';
    return OK;
  }

  private onBlockHeader(): Verdict {
    const header = uintLe(this.buf, 0, 3);
    const last = header & 1;
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    if (type === 3) return fail('corrupt', 'corrupt zstd data: reserved block type');
    if (size > this.blockMax) {
      return fail(
        'corrupt',
        `corrupt zstd data: a block of ${size} bytes exceeds the frame's maximum of ${this.blockMax}`,
      );
    }
    const body = type === 1 ? 1 : size;
    const after = last ? this.checksumBytes : 0;
    this.skipThen(body + after, last ? 'magic' : 'block-header');
    return OK;
  }
}

/** Window_Descriptor → window size (RFC 8878 §3.1.1.1.2). */
function windowSize(descriptor: number): number {
  const base = 2 ** (10 + (descriptor >> 3));
  return base + (base / 8) * (descriptor & 7);
}
