import type { Failure, Verdict } from './types.ts';

/** Receives decoded bytes; a refusal stops the decoder. The bytes may be reused after it returns. */
export type ByteSink = (bytes: Uint8Array) => Verdict;

/** A synchronous push decoder: compressed chunks in, decoded bytes to its sink. */
export interface ByteDecoder {
  push(chunk: Uint8Array): Verdict;
  /** No more input: refuses a stream that stops in the middle. */
  end(): Verdict;
}

/** For an uncompressed tar. */
export function createIdentityDecoder(out: ByteSink): ByteDecoder {
  return { push: out, end: () => ({ ok: true }) };
}

/** Thrown inside a decoding pipeline (zstd, gzip) to stop it with a verdict. */
export class DecodeRefused extends Error {
  constructor(readonly verdict: Failure) {
    super(verdict.error);
  }
}
