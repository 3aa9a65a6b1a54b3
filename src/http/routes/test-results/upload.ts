import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../../app/context.ts';
import type { UploadMeta as Meta } from '../../../app/ingest/ingest.ts';
import { ingestUpload, prepareUpload } from '../../../app/ingest/ingest.ts';
import { type ParsedFile, UploadAttempts } from '../../../app/ingest/parse-file.ts';
import type { UploadResult } from '../../../app/ingest/result.ts';
import { uploadTempDir } from '../../../config.ts';
import { AppError } from '../../../domain/errors.ts';
import { type Spool, SpoolDir } from '../../../lib/spool.ts';
import { untilStalled } from '../../body-progress.ts';
import { validatorFor } from '../../meta.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { UploadMeta, UploadResponse } from '../../schemas/upload.ts';
import type { Api, RouteDeps } from '../../types.ts';

const readMeta = validatorFor<Meta>(UploadMeta, 'meta');
/**
 * File parts per upload. Maven Surefire and Gradle write one report per test class, so a large
 * module's upload has hundreds to a thousand files; each costs little (a result entry), and their
 * bytes together are bounded by MAINLINE_UPLOAD_LIMIT.
 */
const MAX_FILES = 1000;

/** Bytes of a meta part sent as a file (it is parsed in memory); as busboy's field size limit. */
const MAX_META_BYTES = 2 * 1024 * 1024;

/** A file part as received: where its bytes (all arrived) are in the request's spool. */
interface ReceivedFile {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  /** Over MAINLINE_MAX_FILE_BYTES as sent: refused without parsing. */
  readonly truncated: boolean;
}

/** A whole multipart body, received: its meta and its files' bytes, spooled (lib/spool.ts). */
interface Received {
  readonly meta: Meta;
  readonly files: ReceivedFile[];
  readonly spool: Spool;
}

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

function overLimit(limit: number): AppError {
  return new AppError(
    'PAYLOAD_TOO_LARGE',
    `The upload is larger than MAINLINE_UPLOAD_LIMIT (${limit} bytes, as sent and for its files together after decompression): send its files in several uploads, or ask the operator to raise MAINLINE_UPLOAD_LIMIT`,
    // The rest of the body is not read.
    { headers: { connection: 'close' } },
  );
}

/** POST /v1/test-results/upload: multipart with a `meta` JSON part and `junit` file parts. */
export function registerUpload(app: Api, { ctx, parseJunit, ingestGate }: RouteDeps): void {
  const { maxFileBytes: maxBytes, uploadLimitBytes: limit, bodyStallSeconds: stall } = ctx.config;
  // Bodies being received keep their first MiB in memory and the rest in a file, removed when the
  // request ends: N uploads arriving at once cost N MiB of memory, not N × MAINLINE_UPLOAD_LIMIT.
  const spools = new SpoolDir(uploadTempDir(ctx.config));
  app.register(async (scope) => {
    await scope.register(multipart, {
      throwFileSizeLimit: false,
      limits: {
        fileSize: maxBytes,
        files: MAX_FILES,
        fields: 10,
        fieldSize: 2 * 1024 * 1024,
        parts: MAX_FILES + 10,
      },
    });
    scope.post(
      '/test-results/upload',
      {
        schema: {
          tags: ['test results'],
          summary:
            'Upload JUnit XML results (multipart: a `meta` JSON part and one or more `junit` files, plain or gzip)',
          response: { 200: UploadResponse, ...authenticatedErrors },
        },
      },
      async (request) => {
        if (!request.isMultipart()) {
          throw new AppError(
            'UNSUPPORTED_MEDIA_TYPE',
            'Send multipart/form-data with a meta part and junit file parts',
          );
        }
        const caller = callerOf(request);
        const received = await receive(request);
        try {
          // The body is all here: the upload now takes a turn (gate.ts) to be parsed and stored, shared
          // fairly between organizations. A slow client never holds one.
          return await ingestGate.run(() => ingest(caller, received), caller.orgId);
        } finally {
          await received.spool.close();
        }
      },
    );
  });

  /**
   * Reads the whole body (bounded by MAINLINE_UPLOAD_LIMIT, cut when it stalls for
   * MAINLINE_BODY_STALL_SECONDS) without parsing anything. The files' bytes go to one spool, closed
   * here if receiving fails, else by the caller once the upload is done.
   */
  async function receive(request: FastifyRequest): Promise<Received> {
    if (Number(request.headers['content-length'] ?? 0) > limit) throw overLimit(limit);
    const spool = spools.create();
    try {
      return await receiveInto(request, spool);
    } catch (error) {
      await spool.close();
      throw error;
    }
  }

  async function receiveInto(request: FastifyRequest, spool: Spool): Promise<Received> {
    let meta: Meta | undefined;
    const files: ReceivedFile[] = [];
    let received = 0;
    const chunksOf = (part: MultipartFile) =>
      untilStalled<Buffer>(part.file, stall, () => part.file.destroy());
    const count = (bytes: number) => {
      received += bytes;
      if (received > limit) throw overLimit(limit);
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

  /**
   * Parses the received files (each prepared for ingestion as it is parsed: prepare.ts) and stores
   * the upload. Their total after decompression is held to MAINLINE_UPLOAD_LIMIT as well, so a
   * request of many small gzip files cannot make the parser inflate without end.
   */
  async function ingest(caller: Caller, { meta, files: received, spool }: Received): Promise<UploadResult> {
    const prep = await prepareUpload(ctx, caller, meta);
    const files: ParsedFile[] = [];
    const held = new UploadAttempts(ctx.config.maxUploadAttempts);
    let plainLeft = limit;
    for (const file of received) {
      if (file.truncated) {
        files.push(tooLarge(file.name));
        continue;
      }
      const cap = Math.min(maxBytes, plainLeft);
      const parsed = await parseJunit(
        file.name,
        spool.read(file.start, file.end),
        cap,
        prep.basis.identity,
        held.budget(),
        prep,
      );
      plainLeft -= parsed.read?.plainBytes ?? 0;
      if (parsed.read?.overCap === true && cap < maxBytes) throw overLimit(limit);
      files.push(held.add(parsed));
    }
    return ingestUpload(ctx, caller, meta, files, 'multipart', prep);
  }

  function tooLarge(name: string): ParsedFile {
    return {
      name,
      attempts: [],
      summary: {
        ok: false,
        counts: { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 },
        problems: [{ severity: 'error', message: `the file is larger than ${maxBytes} bytes` }],
      },
    };
  }
}
