/**
 * decodeBundle: the uploaded bytes → meta.json, CODEOWNERS, the JUnit files and internal.bin's
 * attempts streamed to a sink, or why the bundle is refused. extractBundle collects the same into
 * memory (for small bundles and tests).
 */
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { JunitAttempt } from '../../domain/junit/index.ts';
import { TarReader } from '../../lib/archive/tar.ts';
import { createZstdStages } from '../../lib/archive/zstd.ts';
import { BundleCollector, type BundleSink, type SelectedFile, selectJunitFiles } from './collect.ts';
import { type ByteDecoder, type ByteSink, createIdentityDecoder, DecodeRefused } from './decoder.ts';
import { type BundleSource, chunksAfter, detectFormat, type Head, openSource, readHead } from './source.ts';
import {
  type BundleFormat,
  type BundleInternalFile,
  type BundleLimits,
  type BundleRead,
  type BundleResult,
  DEFAULT_BUNDLE_LIMITS,
  type Failure,
  fail,
  formatBytes,
  OK,
  type Verdict,
} from './types.ts';

/**
 * What decodeBundle read from an accepted bundle: the files and internal.bin by the names the sink
 * saw (their bytes went to the sink).
 */
export type DecodeOutcome = BundleRead<SelectedFile, string> | Failure;

/** Counts the decompressed bytes (tar headers and padding included) a decode produced. */
export interface DecodeCounter {
  bytes: number;
}

/**
 * Reads a bundle as trunk-analytics-cli PUTs it (a zstd-compressed tar; gzip or plain tar also
 * accepted), handing meta.json, CODEOWNERS and each JUnit candidate to `sink` as they are decoded:
 * memory stays bounded by the zstd window, meta.json's and CODEOWNERS' caps and what the sink keeps.
 * What was handed to the sink is provisional until the outcome is ok (a bundle may be refused at its
 * end). The whole source is read unless the bundle is refused part-way; a refused Readable is left
 * undestroyed for the caller to drain or close. Errors of the source itself (a client that
 * disconnects) are rethrown: they say nothing about the bundle.
 */
export async function decodeBundle(
  source: BundleSource,
  limits: Partial<BundleLimits>,
  sink: BundleSink,
  counter: DecodeCounter = { bytes: 0 },
): Promise<DecodeOutcome> {
  const resolved: BundleLimits = { ...DEFAULT_BUNDLE_LIMITS, ...limits };
  const iterator = openSource(source);
  const head = await readHead(iterator);
  const detected = detectFormat(head.bytes);
  if (!detected.ok) {
    await iterator.return?.();
    return detected;
  }
  const collector = new BundleCollector(resolved, sink);
  const reader = new TarReader(collector);
  const sinkBytes = capTotal(resolved.maxTotalBytes, counter, (bytes) => reader.push(bytes));
  const decoded =
    detected.format === 'tar'
      ? await pump(head, iterator, createIdentityDecoder(sinkBytes))
      : await pumpDecompressed(head, iterator, sinkBytes, detected.format, resolved);
  if (!decoded.ok) return decoded;
  const ended = reader.end();
  return ended.ok ? finish(collector, detected.format) : ended;
}

/**
 * decodeBundle, with the selected JUnit files collected in memory. Holds every JUnit candidate's
 * bytes at once: the HTTP path streams instead (bundle/decode-pool.ts).
 */
export async function extractBundle(
  source: BundleSource,
  limits: Partial<BundleLimits> = {},
): Promise<BundleResult> {
  const kept = new Map<string, Uint8Array>();
  let current: { bytes: Uint8Array; filled: number } | undefined;
  let internalAttempts: JunitAttempt[] = [];
  let internalSummary: BundleInternalFile['summary'] | undefined;
  const sink: BundleSink = {
    meta: () => {},
    codeowners: () => {},
    fileStart(name, size) {
      current = { bytes: new Uint8Array(size), filled: 0 };
      kept.set(name, current.bytes);
      return OK;
    },
    fileData(bytes) {
      if (current === undefined) throw new Error('file data outside a file');
      current.bytes.set(bytes, current.filled);
      current.filled += bytes.length;
      return OK;
    },
    fileEnd() {
      current = undefined;
      return OK;
    },
    internalStart() {
      internalAttempts = [];
      return OK;
    },
    internalAttempts(batch) {
      for (const attempt of batch) internalAttempts.push(attempt);
      return OK;
    },
    internalEnd(summary) {
      internalSummary = summary;
      if (!summary.ok) internalAttempts = [];
      return OK;
    },
  };
  const outcome = await decodeBundle(source, limits, sink);
  if (!outcome.ok) return outcome;
  const files = outcome.files.map((f) => ({ ...f, bytes: kept.get(f.name) ?? new Uint8Array(0) }));
  const { internal: name, ...rest } = outcome;
  if (name === undefined || internalSummary === undefined) return { ...rest, files };
  return { ...rest, files, internal: { name, summary: internalSummary, attempts: internalAttempts } };
}

function capTotal(max: number, counter: DecodeCounter, next: ByteSink): ByteSink {
  return (bytes) => {
    counter.bytes += bytes.length;
    if (counter.bytes > max)
      return fail('too_large', `the bundle decompresses to more than ${formatBytes(max)}`);
    return next(bytes);
  };
}

async function pump(head: Head, iterator: AsyncIterator<unknown>, decoder: ByteDecoder): Promise<Verdict> {
  for await (const chunk of chunksAfter(head, iterator)) {
    const verdict = decoder.push(chunk);
    if (!verdict.ok) return verdict;
  }
  return decoder.end();
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

/** zstd (node:zlib, behind the frame header check of zstd.ts) or gzip, streamed into `sink`. */
async function pumpDecompressed(
  head: Head,
  iterator: AsyncIterator<unknown>,
  sink: ByteSink,
  format: 'tar+zstd' | 'tar+gzip',
  limits: BundleLimits,
): Promise<Verdict> {
  const source = guarded(chunksAfter(head, iterator));
  const consume = async (output: AsyncIterable<Buffer>) => {
    for await (const bytes of output) {
      const verdict = sink(bytes);
      if (!verdict.ok) throw new DecodeRefused(verdict);
    }
  };
  try {
    if (format === 'tar+gzip') await pipeline(source, createGunzip(), consume);
    else await pipeline(source, ...createZstdStages(limits), consume);
    return OK;
  } catch (error) {
    if (error instanceof DecodeRefused) return error.verdict;
    if (error instanceof SourceFailed) throw error.cause;
    const what = format === 'tar+gzip' ? 'gzip' : 'zstd';
    return fail('corrupt', `corrupt ${what} data: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function finish(collector: BundleCollector, format: BundleFormat): DecodeOutcome {
  const parsed = collector.meta;
  if (parsed === undefined) return fail('invalid_meta', 'the bundle has no meta.json');
  if (!parsed.ok) return parsed;
  const files = selectJunitFiles(collector, parsed);
  // The JUnit files are the source when there are any; else internal.bin (collect.ts).
  const internal = files.length === 0 ? collector.internal?.name : undefined;
  if (files.length > 0 && collector.internal !== undefined)
    collector.problems.push(
      `${collector.internal.name} was not ingested: the bundle's JUnit files are its source of test results`,
    );
  if (files.length === 0 && internal === undefined)
    collector.problems.push('the bundle contains no JUnit files');
  const codeowners =
    collector.codeowners === undefined ? undefined : new TextDecoder().decode(collector.codeowners);
  return {
    ok: true,
    format,
    meta: { ...parsed.meta, ...(codeowners === undefined ? {} : { codeowners }) },
    rawMeta: parsed.raw,
    files,
    ...(internal === undefined ? {} : { internal }),
    problems: [...parsed.problems, ...collector.problems],
  };
}
