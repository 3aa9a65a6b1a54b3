/** Reading the upload's bytes and recognising its container format from the first bytes. */
import type { Readable } from 'node:stream';
import { hasValidChecksum, isZeroBlock } from '../../lib/archive/tar-header.ts';
import { type BundleFormat, type Failure, fail } from './types.ts';

export type BundleSource = AsyncIterable<Uint8Array> | Readable;

/** How many leading bytes format detection looks at (one tar header block). */
const HEAD_BYTES = 512;

function isReadable(source: BundleSource): source is Readable {
  return (
    typeof (source as Readable).iterator === 'function' && typeof (source as Readable).pipe === 'function'
  );
}

/** An iterator over the source that, for a Readable, does not destroy it when we stop early. */
export function openSource(source: BundleSource): AsyncIterator<unknown> {
  return isReadable(source) ? source.iterator({ destroyOnReturn: false }) : source[Symbol.asyncIterator]();
}

function asBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  throw new TypeError(
    `a bundle source must yield bytes, not ${typeof chunk} (is an encoding set on the stream?)`,
  );
}

export interface Head {
  /** The first bytes (at least HEAD_BYTES unless the source ended sooner). */
  readonly bytes: Uint8Array;
}

export async function readHead(iterator: AsyncIterator<unknown>): Promise<Head> {
  const parts: Uint8Array[] = [];
  let length = 0;
  while (length < HEAD_BYTES) {
    const next = await iterator.next();
    if (next.done) break;
    const bytes = asBytes(next.value);
    parts.push(bytes);
    length += bytes.length;
  }
  return { bytes: Buffer.concat(parts, length) };
}

/** The head, then the rest of the source. */
export async function* chunksAfter(head: Head, iterator: AsyncIterator<unknown>): AsyncGenerator<Uint8Array> {
  if (head.bytes.length > 0) yield head.bytes;
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield asBytes(next.value);
    }
  } finally {
    await iterator.return?.();
  }
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd] as const;
const GZIP_MAGIC = [0x1f, 0x8b] as const;

function isSkippableZstd(bytes: Uint8Array): boolean {
  return ((bytes[0] ?? 0) & 0xf0) === 0x50 && startsWith(bytes.subarray(1), [0x2a, 0x4d, 0x18]);
}

function guess(bytes: Uint8Array): string {
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return ' (a zip archive)';
  if (startsWith(bytes, [0x42, 0x5a, 0x68])) return ' (bzip2 data)';
  if (startsWith(bytes, [0xfd, 0x37, 0x7a, 0x58, 0x5a])) return ' (xz data)';
  const first = String.fromCharCode(bytes[0] ?? 0);
  if (first === '{' || first === '[') return ' (JSON text)';
  if (first === '<') return ' (XML text: send JUnit XML to /v1/test-results/upload instead)';
  return '';
}

/**
 * zstd is what trunk-analytics-cli sends. gzip-compressed and plain tar are accepted as well, since
 * other clients may produce them; anything else is refused with what we expected.
 */
export function detectFormat(
  bytes: Uint8Array,
): { readonly ok: true; readonly format: BundleFormat } | Failure {
  if (bytes.length === 0)
    return fail('unsupported_format', 'the upload is empty: expected a bundle.tar.zstd');
  if (startsWith(bytes, ZSTD_MAGIC) || isSkippableZstd(bytes)) return { ok: true, format: 'tar+zstd' };
  if (startsWith(bytes, GZIP_MAGIC)) return { ok: true, format: 'tar+gzip' };
  const block = bytes.subarray(0, HEAD_BYTES);
  if (block.length === HEAD_BYTES && !isZeroBlock(block) && hasValidChecksum(block))
    return { ok: true, format: 'tar' };
  const hex = [...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  return fail(
    'unsupported_format',
    `expected a zstd-compressed tar (bundle.tar.zstd, starting with bytes 28 b5 2f fd; gzip or plain tar also accepted), but the upload starts with ${hex}${guess(bytes)}`,
  );
}
