/** extractBundle: the uploaded bytes → meta.json and the JUnit files, or why the bundle is refused. */
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { BundleCollector, selectJunitFiles } from './collect.ts';
import { type ByteDecoder, type ByteSink, createIdentityDecoder } from './decoder.ts';
import { type BundleSource, chunksAfter, detectFormat, type Head, openSource, readHead } from './source.ts';
import { TarReader } from './tar.ts';
import {
  type BundleFormat,
  type BundleLimits,
  type BundleResult,
  DEFAULT_BUNDLE_LIMITS,
  type Failure,
  fail,
  formatBytes,
  type Verdict,
} from './types.ts';
import { createZstdDecoder } from './zstd.ts';

/**
 * Reads a bundle as trunk-analytics-cli PUTs it (a zstd-compressed tar; gzip or plain tar also
 * accepted). The whole source is read unless the bundle is refused part-way; a refused Readable is
 * left undestroyed for the caller to drain or close. Errors of the source itself (a client that
 * disconnects) are rethrown: they say nothing about the bundle.
 */
export async function extractBundle(
  source: BundleSource,
  limits: Partial<BundleLimits> = {},
): Promise<BundleResult> {
  const resolved: BundleLimits = { ...DEFAULT_BUNDLE_LIMITS, ...limits };
  const iterator = openSource(source);
  const head = await readHead(iterator);
  const detected = detectFormat(head.bytes);
  if (!detected.ok) {
    await iterator.return?.();
    return detected;
  }
  const collector = new BundleCollector(resolved);
  const reader = new TarReader(collector);
  const sink = capTotal(resolved.maxTotalBytes, (bytes) => reader.push(bytes));
  const decoded =
    detected.format === 'tar+gzip'
      ? await pumpGzip(head, iterator, sink)
      : await pump(head, iterator, decoderFor(detected.format, resolved, sink));
  if (!decoded.ok) return decoded;
  const ended = reader.end();
  return ended.ok ? finish(collector, detected.format) : ended;
}

function capTotal(max: number, next: ByteSink): ByteSink {
  let total = 0;
  return (bytes) => {
    total += bytes.length;
    if (total > max) return fail('too_large', `the bundle decompresses to more than ${formatBytes(max)}`);
    return next(bytes);
  };
}

function decoderFor(format: BundleFormat, limits: BundleLimits, sink: ByteSink): ByteDecoder {
  return format === 'tar+zstd' ? createZstdDecoder(limits, sink) : createIdentityDecoder(sink);
}

async function pump(head: Head, iterator: AsyncIterator<unknown>, decoder: ByteDecoder): Promise<Verdict> {
  for await (const chunk of chunksAfter(head, iterator)) {
    const verdict = decoder.push(chunk);
    if (!verdict.ok) return verdict;
  }
  return decoder.end();
}

/** Thrown by the gzip consumer to stop the pipeline with a verdict. */
class Refused extends Error {
  constructor(readonly verdict: Failure) {
    super(verdict.error);
  }
}

/** Wraps errors of the source so they are not mistaken for gzip errors. */
class SourceFailed extends Error {}

async function* guarded(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* chunks;
  } catch (error) {
    throw new SourceFailed('the bundle source failed', { cause: error });
  }
}

async function pumpGzip(head: Head, iterator: AsyncIterator<unknown>, sink: ByteSink): Promise<Verdict> {
  try {
    await pipeline(
      guarded(chunksAfter(head, iterator)),
      createGunzip(),
      async (output: AsyncIterable<Buffer>) => {
        for await (const bytes of output) {
          const verdict = sink(bytes);
          if (!verdict.ok) throw new Refused(verdict);
        }
      },
    );
    return { ok: true };
  } catch (error) {
    if (error instanceof Refused) return error.verdict;
    if (error instanceof SourceFailed) throw error.cause;
    return fail('corrupt', `corrupt gzip data: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function finish(collector: BundleCollector, format: BundleFormat): BundleResult {
  const parsed = collector.meta;
  if (parsed === undefined) return fail('invalid_meta', 'the bundle has no meta.json');
  if (!parsed.ok) return parsed;
  const files = selectJunitFiles(collector, parsed);
  if (files.length === 0) collector.problems.push('the bundle contains no JUnit files');
  const codeowners =
    collector.codeowners === undefined ? undefined : new TextDecoder().decode(collector.codeowners);
  return {
    ok: true,
    format,
    meta: { ...parsed.meta, ...(codeowners === undefined ? {} : { codeowners }) },
    rawMeta: parsed.raw,
    files,
    problems: [...parsed.problems, ...collector.problems],
  };
}
