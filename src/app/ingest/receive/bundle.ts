// A bundle (the PUT to a signed URL: bundle-url.ts) once its body has arrived: decoded on a thread
// of its own (app/bundle), its entries go through the one file loop (files.ts) as they are decoded,
// and the upload is stored.
import { AppError } from '../../../domain/errors.ts';
import type { JunitAttempt, JunitFileSummary } from '../../../domain/junit/index.ts';
import type { BundleDecoders, BundleDecoding, SentOutcome } from '../../bundle/decode-pool.ts';
import { type BundleResult, type BundleUploadMeta, toUploadMeta } from '../../bundle/index.ts';
import type { AppContext, Caller } from '../../context.ts';
import { ingestUpload } from '../ingest.ts';
import { decodeAttempts } from '../parsing/codec.ts';
import type { ParseJunit } from '../parsing/pool.ts';
import type { ParsedFile, UploadMeta } from '../prepare/types.ts';
import type { UploadPrep } from '../prepare/upload-prep.ts';
import type { UploadResult } from '../result.ts';
import { receiveFiles, type UploadEntry } from './files.ts';

const STATUS_OF: Record<
  Exclude<BundleResult, { ok: true }>['code'],
  'UNSUPPORTED_MEDIA_TYPE' | 'BAD_REQUEST' | 'PAYLOAD_TOO_LARGE' | 'VALIDATION_FAILED'
> = {
  unsupported_format: 'UNSUPPORTED_MEDIA_TYPE',
  corrupt: 'BAD_REQUEST',
  too_large: 'PAYLOAD_TOO_LARGE',
  invalid_meta: 'VALIDATION_FAILED',
};

/** A received bundle and what it is stored with. */
export interface BundleToStore {
  /** The bundle as received, read from its start (a spool). */
  readonly bytes: AsyncIterable<Uint8Array>;
  /** meta.json (with CODEOWNERS, once known) as the upload contract's meta. */
  readonly metaOf: (meta: BundleUploadMeta) => UploadMeta;
  /** Refuses to store (throws) when the bundle may no longer be stored (its URL's token revoked). */
  readonly beforeStore: () => Promise<void>;
  readonly parseJunit: ParseJunit;
  /** Where zstd and the tar walk run (threads of their own). */
  readonly decoders: BundleDecoders;
}

/** meta.json mapped to the upload contract's meta (refused when it is not usable), then `validate`d. */
export function bundleMetaOf(
  meta: BundleUploadMeta,
  orgSlug: string,
  uploadKey: string,
  validate: (m: unknown) => UploadMeta,
): UploadMeta {
  const mapped = toUploadMeta(meta, orgSlug);
  if (!mapped.ok)
    throw new AppError('VALIDATION_FAILED', `The bundle's meta.json is not usable: ${mapped.error}`);
  return validate({ ...mapped.meta, upload_key: uploadKey });
}

/**
 * Decodes and stores a bundle. Its JUnit files are prepared for ingestion while they are parsed
 * when the upload's CODEOWNERS is known by then (else ingestion prepares them). The bundle's
 * problems (what it skipped or lacked) become the upload's.
 */
export async function ingestBundle(
  ctx: AppContext,
  caller: Caller,
  input: BundleToStore,
): Promise<UploadResult> {
  const decoding = input.decoders.decode(input.bytes, {
    maxFileBytes: ctx.config.maxFileBytes,
    maxInternalRuns: ctx.config.maxUploadAttempts,
  });
  let read: { meta: UploadMeta; files: ParsedFile[]; prep: UploadPrep | undefined; problems: string[] };
  try {
    const entries = new BundleEntries(decoding, input.metaOf);
    const received = await receiveFiles(ctx, caller, entries.read(), { parseJunit: input.parseJunit });
    read = entries.outcome(received.files, received.prep);
  } finally {
    // Stops the thread if we gave up early (a refused meta.json, a parser failure); else a no-op.
    decoding.abort();
  }
  // The token may have been revoked while the bundle was read: nothing is stored then.
  await input.beforeStore();
  return ingestUpload(ctx, caller, {
    meta: read.meta,
    files: read.files,
    source: 'bundle',
    prep: read.prep,
    notes: read.problems,
  });
}

/**
 * The decoder's events as upload entries: meta.json (CLI bundles have it first), then each JUnit
 * entry streamed to the parser as it is decoded, or internal.bin's attempts as the bundle's thread
 * decodes them, until the outcome (kept for `outcome`).
 */
class BundleEntries {
  #bundleMeta: BundleUploadMeta | undefined;
  #done: SentOutcome | undefined;

  constructor(
    private readonly decoding: BundleDecoding,
    private readonly metaOf: (meta: BundleUploadMeta) => UploadMeta,
  ) {}

  async *read(): AsyncGenerator<UploadEntry> {
    let codeowners: string | undefined;
    for (;;) {
      const event = await this.decoding.next();
      if (event.kind === 'meta') {
        this.#bundleMeta = event.meta;
        const withOwners = codeowners === undefined ? event.meta : { ...event.meta, codeowners };
        // A CLI bundle whose meta.json names a CODEOWNERS file carries it after the JUnit files.
        const prepare = codeowners !== undefined || event.meta.codeownersPath === undefined;
        yield { kind: 'meta', meta: this.metaOf(withOwners), prepare };
      } else if (event.kind === 'codeowners') {
        codeowners = event.text;
        yield { kind: 'codeowners' };
      } else if (event.kind === 'file') {
        const ref = this.#bundleMeta?.junitFiles.find((f) => f.path === event.name);
        const body = new FileBody(this.decoding);
        const name = ref?.originalPath ?? event.name;
        yield { kind: 'file', key: `file:${event.name}`, name, bytes: body.chunks() };
        // A file the parser stopped reading (too large, malformed): its remaining bytes are skipped.
        await body.drain();
      } else if (event.kind === 'internal') {
        const name = event.name;
        yield { kind: 'decoded', key: `internal:${name}`, name, read: (add) => this.#internal(add) };
      } else if (event.kind === 'done') {
        this.#done = event.outcome;
        return;
      }
    }
  }

  /**
   * internal.bin's attempts, as its thread decodes them, until its end: its summary. A refused file
   * holds no attempts (its error is its one problem), as a rejected JUnit file.
   */
  async #internal(add: (batch: readonly JunitAttempt[]) => void): Promise<JunitFileSummary> {
    for (;;) {
      const event = await this.decoding.next();
      if (event.kind === 'attempts') add(decodeAttempts(event.batch));
      else if (event.kind === 'internalEnd') return event.summary;
      else throw new Error(`bundle decoding: ${event.kind} inside internal.bin`);
    }
  }

  /** The upload the bundle makes, once read: its files as the outcome lists them, and its problems. */
  outcome(
    parsed: ReadonlyMap<string, ParsedFile>,
    prep: UploadPrep | undefined,
  ): { meta: UploadMeta; files: ParsedFile[]; prep: UploadPrep | undefined; problems: string[] } {
    const outcome = this.#done;
    if (outcome === undefined) throw new Error('bundle decoding ended without its outcome');
    if (!outcome.ok)
      throw new AppError(STATUS_OF[outcome.code], `The bundle could not be read: ${outcome.error}`);
    const files = outcome.files.flatMap((f) => {
      const file = parsed.get(`file:${f.name}`);
      if (file === undefined) return [];
      // Read before meta.json said where the CLI found it.
      return [
        f.originalPath === undefined || file.name === f.originalPath
          ? file
          : { ...file, name: f.originalPath },
      ];
    });
    const meta = this.metaOf(outcome.meta);
    // internal.bin is the source only when the bundle has no JUnit file (extract.ts).
    const internal = outcome.internal === undefined ? undefined : parsed.get(`internal:${outcome.internal}`);
    if (internal !== undefined && internal.name === outcome.internal) files.push(internal);
    return { meta, files, prep, problems: [...outcome.problems] };
  }
}

/** The `data` events of one JUnit entry, as the parser's source. */
class FileBody {
  #ended = false;

  constructor(private readonly decoding: BundleDecoding) {}

  async *chunks(): AsyncGenerator<Uint8Array> {
    while (!this.#ended) {
      const event = await this.decoding.next();
      if (event.kind === 'data') yield event.bytes;
      else if (event.kind === 'fileEnd') this.#ended = true;
      else throw new Error(`bundle decoding: ${event.kind} inside a file`);
    }
  }

  async drain(): Promise<void> {
    for await (const _ of this.chunks()) {
      // skipped
    }
  }
}
