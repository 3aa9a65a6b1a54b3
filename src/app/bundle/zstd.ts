/**
 * Streaming zstd decoding with fzstd, guarded by ZstdFrameScanner. Output is handed to `out` block by
 * block (≤ 128 KiB each) as soon as it is decoded; when `out` refuses, decoding stops at once.
 */
import { Decompress } from 'fzstd';
import type { ByteDecoder, ByteSink } from './decoder.ts';
import { fail, OK, type Verdict } from './types.ts';
import { type FrameLimits, ZstdFrameScanner } from './zstd-frames.ts';

/** Thrown inside fzstd's callback only to unwind it; never leaves this module. */
class StopDecoding extends Error {}

export function createZstdDecoder(limits: FrameLimits, out: ByteSink): ByteDecoder {
  const scanner = new ZstdFrameScanner(limits);
  let refusal: Verdict = OK;
  const decompress = new Decompress((data) => {
    if (data.length === 0) return;
    refusal = out(data);
    if (!refusal.ok) throw new StopDecoding();
  });

  const run = (action: () => void): Verdict => {
    try {
      action();
      return OK;
    } catch (error) {
      if (error instanceof StopDecoding) return refusal;
      return fail('corrupt', `corrupt zstd data: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  return {
    push(chunk) {
      const scanned = scanner.scan(chunk);
      return scanned.ok ? run(() => decompress.push(chunk)) : scanned;
    },
    end() {
      const scanned = scanner.end();
      return scanned.ok ? run(() => decompress.push(new Uint8Array(0), true)) : scanned;
    },
  };
}
