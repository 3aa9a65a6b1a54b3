/**
 * Streaming zstd decoding with node:zlib's zstd (Node ≥ 22.15), guarded by ZstdFrameScanner: each
 * chunk's frame and block headers are checked before the decoder sees that chunk, and the decoder
 * itself refuses a window above the limit (ZSTD_d_windowLogMax), a second bound on its memory.
 * Decoded bytes come in pieces of at most ZSTD_OUTPUT_CHUNK, so a caller may size its messages by it.
 */
import { Transform } from 'node:stream';
import { constants, createZstdDecompress, type ZstdDecompress } from 'node:zlib';
import { DecodeRefused } from './verdict.ts';
import { type FrameLimits, ZstdFrameScanner } from './zstd-frames.ts';

export const ZSTD_OUTPUT_CHUNK = 128 * 1024;

/** The two stages of a zstd decoding pipeline: the header check, then the decoder. */
export function createZstdStages(limits: FrameLimits): [Transform, ZstdDecompress] {
  const scanner = new ZstdFrameScanner(limits);
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const scanned = scanner.scan(chunk);
      if (scanned.ok) done(null, chunk);
      else done(new DecodeRefused(scanned));
    },
    flush(done) {
      const scanned = scanner.end();
      done(scanned.ok ? null : new DecodeRefused(scanned));
    },
  });
  // Rounded up, so the scanner's exact limit (a window may be 2^n plus eighths of it) stays the one
  // a user meets; the decoder's is the backstop at less than twice it.
  const windowLog = Math.min(31, Math.max(10, Math.ceil(Math.log2(limits.maxWindowBytes))));
  const decoder = createZstdDecompress({
    chunkSize: ZSTD_OUTPUT_CHUNK,
    params: { [constants.ZSTD_d_windowLogMax]: windowLog },
  });
  return [check, decoder];
}
