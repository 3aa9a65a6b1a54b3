// Receiving a multipart upload's body: its meta part and its file parts, spooled whole before
// anything is parsed (bounded by MAINLINE_UPLOAD_LIMIT, cut when it stalls for
// MAINLINE_BODY_STALL_SECONDS), so that no ingest turn waits on a client's bytes.
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { UploadMeta as Meta } from '../../../app/ingest/prepare/types.ts';
import {
  type ReceivedMultipart,
  type ReceivedPart,
  uploadTooLarge,
} from '../../../app/ingest/receive/multipart.ts';
import type { Config } from '../../../config.ts';
import { AppError } from '../../../domain/errors.ts';
import type { Spool, SpoolDir } from '../../../lib/spool.ts';
import { untilStalled } from '../../body-progress.ts';
import { validatorFor } from '../../meta.ts';
import { UploadMeta } from '../../schemas/upload.ts';

const readMeta = validatorFor<Meta>(UploadMeta, 'meta');

/** Bytes of a meta part, as a field or a file (it is parsed in memory); as busboy's field size limit. */
export const MAX_META_BYTES = 2 * 1024 * 1024;

type BodyLimits = Pick<Config, 'uploadLimitBytes' | 'bodyStallSeconds'>;

/**
 * The JSON text of a meta part sent as a form field. @fastify/multipart hands over a field sent
 * with `Content-Type: application/json` already parsed (an object, not its text): it is written back
 * as JSON so that it is checked exactly like a field sent as text, a parsed JSON string included.
 */
function metaField(part: MultipartValue, count: (bytes: number) => void): string {
  // Busboy cuts a field at its size limit: what is left is no JSON worth parsing.
  if (part.valueTruncated)
    throw new AppError(
      'VALIDATION_FAILED',
      `The meta field is larger than ${MAX_META_BYTES} bytes: send only the upload's metadata in it`,
    );
  const text = part.mimetype === 'application/json' ? JSON.stringify(part.value) : String(part.value);
  count(Buffer.byteLength(text));
  return text;
}

/**
 * Reads the whole body (bounded by MAINLINE_UPLOAD_LIMIT, cut when it stalls for
 * MAINLINE_BODY_STALL_SECONDS) without parsing anything. The files' bytes go to one spool, closed
 * here if receiving fails, else by the caller once the upload is done.
 */
export async function receiveMultipart(
  request: FastifyRequest,
  spools: SpoolDir,
  config: BodyLimits,
): Promise<ReceivedMultipart> {
  const { uploadLimitBytes: limit } = config;
  if (Number(request.headers['content-length'] ?? 0) > limit) throw uploadTooLarge(limit);
  const spool = spools.create();
  try {
    return await receiveInto(request, spool, config);
  } catch (error) {
    await spool.close();
    throw error;
  }
}

async function receiveInto(
  request: FastifyRequest,
  spool: Spool,
  config: BodyLimits,
): Promise<ReceivedMultipart> {
  const { uploadLimitBytes: limit, bodyStallSeconds: stall } = config;
  let meta: Meta | undefined;
  const files: ReceivedPart[] = [];
  let received = 0;
  const chunksOf = (part: MultipartFile) => untilStalled<Buffer>(part.file, stall, () => part.file.destroy());
  const count = (bytes: number) => {
    received += bytes;
    if (received > limit) throw uploadTooLarge(limit);
  };
  const metaFile = async (part: MultipartFile): Promise<string> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of chunksOf(part)) {
      count(chunk.length);
      size += chunk.length;
      if (size > MAX_META_BYTES)
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `The meta part is larger than ${MAX_META_BYTES} bytes: send only the upload's metadata in it`,
          { headers: { connection: 'close' } },
        );
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  };
  // A meta part that is refused is answered only once the whole body has arrived: answering while
  // the client still sends its files left their bytes unread, and the connection was reset under
  // the client before it could read the answer (ECONNRESET instead of the 400).
  let refused: AppError | undefined;
  try {
    for await (const part of untilStalled(request.parts(), stall)) {
      if (part.fieldname === 'meta') {
        try {
          meta = readMeta(part.type === 'field' ? metaField(part, count) : await metaFile(part));
        } catch (error) {
          // A limit that stops reading the body (connection: close) is answered at once.
          if (!(error instanceof AppError) || error.headers?.['connection'] === 'close') throw error;
          refused ??= error;
        }
      } else if (part.type === 'file' && refused !== undefined) {
        // Read to the end and dropped: this upload is answered with its meta's error.
        for await (const chunk of chunksOf(part)) count(chunk.length);
      } else if (part.type === 'file') {
        const start = spool.size;
        for await (const chunk of chunksOf(part)) {
          count(chunk.length);
          await spool.write(chunk);
        }
        files.push({
          name: part.filename || 'junit.xml',
          start,
          end: spool.size,
          truncated: part.file.truncated,
        });
      }
    }
    await spool.finish();
  } catch (error) {
    // Our own answers (bad meta, limits) as they are; a body busboy cannot read is the client's fault.
    if (error instanceof AppError) throw error;
    // @fastify/multipart parses a field sent as application/json itself, and refuses one that is
    // not JSON (or cut at the field size limit) with a 406 once the body has been read.
    if ((error as { code?: string }).code === 'FST_INVALID_JSON_FIELD_ERROR')
      throw new AppError(
        'INVALID_JSON',
        `A form field sent with Content-Type: application/json is not valid JSON (or is larger than ${MAX_META_BYTES} bytes): the meta part must hold the upload's JSON object`,
      );
    if ((error as { statusCode?: number }).statusCode !== undefined) throw error;
    throw new AppError(
      'BAD_REQUEST',
      `The multipart body could not be read: ${(error as Error).message}; send multipart/form-data with a meta part and junit file parts`,
    );
  }
  if (refused !== undefined) throw refused;
  if (meta === undefined)
    throw new AppError(
      'VALIDATION_FAILED',
      'The upload has no meta part: add a form field named meta holding the JSON described in the docs',
    );
  if (files.length === 0)
    throw new AppError(
      'VALIDATION_FAILED',
      'The upload has no files: add one or more file parts named junit',
    );
  return { meta, files, spool };
}
