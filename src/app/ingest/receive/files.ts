// The one loop over an upload's files, whichever way they came: the parts of a multipart upload
// (multipart.ts) or the entries of a bundle (bundle.ts). Each route turns what it received into
// UploadEntry values; here the meta starts the upload's preparation (prepare/), and each file is
// parsed on a parser thread (parsing/) and prepared as it is parsed, within the attempts the upload
// may hold.
import type { JunitAttempt, JunitFileSummary } from '../../../domain/junit/index.ts';
import type { AppContext, Caller } from '../../context.ts';
import { UploadAttempts } from '../parsing/parse-file.ts';
import type { ParseJunit } from '../parsing/pool.ts';
import { IncomingFile } from '../prepare/incoming-file.ts';
import { prepareUpload } from '../prepare/prepare-upload.ts';
import type { IdentityContext, ParsedFile, UploadMeta } from '../prepare/types.ts';
import type { UploadPrep } from '../prepare/upload-prep.ts';

/** One thing an upload holds, in the order it is received. */
export type UploadEntry =
  /**
   * The upload's meta: its files are identified from here on, and with `prepare` also prepared for
   * storing while they are parsed (without it, the meta lacks the upload's CODEOWNERS so far).
   */
  | { readonly kind: 'meta'; readonly meta: UploadMeta; readonly prepare: boolean }
  /** The upload's CODEOWNERS came after its meta: what was prepared without it is not used. */
  | { readonly kind: 'codeowners' }
  /** A JUnit file (plain or gzip); `refused`: its problem, and it is not parsed. */
  | {
      readonly kind: 'file';
      /** Names the file among the upload's (its name may not be unique). */
      readonly key: string;
      readonly name: string;
      readonly bytes: AsyncIterable<Uint8Array>;
      readonly refused?: string | undefined;
    }
  /** Attempts decoded elsewhere (a bundle's internal.bin): `read` hands each batch on, then ends. */
  | {
      readonly kind: 'decoded';
      readonly key: string;
      readonly name: string;
      readonly read: (add: (batch: readonly JunitAttempt[]) => void) => Promise<JunitFileSummary>;
    };

/** What receiveFiles read: the files by key (in order), and their preparation. */
export interface ReceivedFiles {
  readonly files: ReadonlyMap<string, ParsedFile>;
  /** Undefined when none was made, or what was made does not hold (a later CODEOWNERS). */
  readonly prep: UploadPrep | undefined;
}

const EMPTY_COUNTS = { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 };

/**
 * Reads an upload's entries: each file parsed (at most MAINLINE_MAX_FILE_BYTES after decompression)
 * and held to the attempts one upload may hold (MAINLINE_MAX_UPLOAD_ATTEMPTS). With `plainLimit`,
 * the files' bytes after decompression are held to it together as well (so a request of many small
 * gzip files cannot make the parser inflate without end): the first file past it refuses the upload.
 */
export async function receiveFiles(
  ctx: AppContext,
  caller: Caller,
  entries: AsyncIterable<UploadEntry>,
  options: { parseJunit: ParseJunit; plainLimit?: { bytes: number; refuse: () => Error } },
): Promise<ReceivedFiles> {
  const maxBytes = ctx.config.maxFileBytes;
  const held = new UploadAttempts(ctx.config.maxUploadAttempts);
  const files = new Map<string, ParsedFile>();
  let identity: IdentityContext | undefined;
  let prep: UploadPrep | undefined;
  let stale = false;
  let plainLeft = options.plainLimit?.bytes ?? Number.POSITIVE_INFINITY;
  for await (const entry of entries) {
    if (entry.kind === 'meta') {
      const made = await prepareUpload(ctx, caller, entry.meta);
      identity = made.basis.identity;
      if (entry.prepare) prep = made;
    } else if (entry.kind === 'codeowners') {
      if (prep !== undefined) stale = true;
    } else if (entry.kind === 'file') {
      if (entry.refused !== undefined) {
        files.set(entry.key, refusedFile(entry.name, entry.refused));
        continue;
      }
      const cap = Math.min(maxBytes, plainLeft);
      const parsed = await options.parseJunit({
        name: entry.name,
        source: entry.bytes,
        maxBytes: cap,
        identity,
        budget: held.budget(),
        prep,
      });
      plainLeft -= parsed.read?.plainBytes ?? 0;
      if (parsed.read?.overCap === true && cap < maxBytes) throw options.plainLimit?.refuse();
      files.set(entry.key, held.add(parsed));
    } else {
      const incoming = new IncomingFile(ctx.caches.derivation, identity, prep);
      const summary = await entry.read((batch) => incoming.add(batch));
      files.set(entry.key, held.add(incoming.finish(entry.name, summary, undefined)));
    }
  }
  return { files, prep: stale ? undefined : prep };
}

/** A file refused before parsing: its one problem, no attempts. */
function refusedFile(name: string, message: string): ParsedFile {
  return {
    name,
    attempts: [],
    summary: { ok: false, counts: EMPTY_COUNTS, problems: [{ severity: 'error', message }] },
  };
}
