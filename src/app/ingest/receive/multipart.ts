// A multipart upload (POST /v1/test-results/upload) once its body has arrived: its meta and its file
// parts, spooled by the route, go through the one file loop (files.ts) and are stored.
import { AppError } from '../../../domain/errors.ts';
import type { Spool } from '../../../lib/spool.ts';
import type { AppContext, Caller } from '../../context.ts';
import { ingestUpload } from '../ingest.ts';
import type { ParseJunit } from '../parsing/pool.ts';
import type { UploadMeta } from '../prepare/types.ts';
import type { UploadResult } from '../result.ts';
import { receiveFiles, type UploadEntry } from './files.ts';

/** A file part as received: where its bytes (all arrived) are in the request's spool. */
export interface ReceivedPart {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  /** Over MAINLINE_MAX_FILE_BYTES as sent: refused without parsing. */
  readonly truncated: boolean;
}

/** A whole multipart body, received: its meta and its files' bytes, spooled (lib/spool.ts). */
export interface ReceivedMultipart {
  readonly meta: UploadMeta;
  readonly files: readonly ReceivedPart[];
  readonly spool: Spool;
}

/** An upload over MAINLINE_UPLOAD_LIMIT, as sent or for its files together after decompression. */
export function uploadTooLarge(limit: number): AppError {
  return new AppError(
    'PAYLOAD_TOO_LARGE',
    `The upload is larger than MAINLINE_UPLOAD_LIMIT (${limit} bytes, as sent and for its files together after decompression): send its files in several uploads, or ask the operator to raise MAINLINE_UPLOAD_LIMIT`,
    // The rest of the body is not read.
    { headers: { connection: 'close' } },
  );
}

/**
 * Parses the received files (each prepared for ingestion as it is parsed) and stores the upload.
 * Their total after decompression is held to MAINLINE_UPLOAD_LIMIT as well.
 */
export async function ingestMultipart(
  ctx: AppContext,
  caller: Caller,
  received: ReceivedMultipart,
  parseJunit: ParseJunit,
): Promise<UploadResult> {
  const { meta, spool } = received;
  const maxBytes = ctx.config.maxFileBytes;
  const limit = ctx.config.uploadLimitBytes;
  async function* entries(): AsyncGenerator<UploadEntry> {
    yield { kind: 'meta', meta, prepare: true };
    for (const [k, part] of received.files.entries())
      yield {
        kind: 'file',
        key: String(k),
        name: part.name,
        bytes: spool.read(part.start, part.end),
        refused: part.truncated ? `the file is larger than ${maxBytes} bytes` : undefined,
      };
  }
  const { files, prep } = await receiveFiles(ctx, caller, entries(), {
    parseJunit,
    plainLimit: { bytes: limit, refuse: () => uploadTooLarge(limit) },
  });
  return ingestUpload(ctx, caller, { meta, files: [...files.values()], source: 'multipart', prep });
}
