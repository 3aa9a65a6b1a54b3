import type { Verdict } from './types.ts';

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

export { DecodeRefused } from '../../lib/archive/verdict.ts';
