import type { MultipartFile } from '@fastify/multipart';
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { UploadMeta as Meta } from '../../../app/ingest/ingest.ts';
import { ingestUpload, prepareUpload } from '../../../app/ingest/ingest.ts';
import { type AttemptBudget, type ParsedFile, UploadAttempts } from '../../../app/ingest/parse-file.ts';
import type { ParseJunit } from '../../../app/ingest/parser-pool.ts';
import type { UploadPrep } from '../../../app/ingest/prepare.ts';
import type { UploadResult } from '../../../app/ingest/result.ts';
import { AppError } from '../../../domain/errors.ts';
import { validatorFor } from '../../meta.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { UploadMeta, UploadResponse } from '../../schemas/upload.ts';
import type { Api, RouteDeps } from '../../types.ts';

const readMeta = validatorFor<Meta>(UploadMeta, 'meta');
const MAX_FILES = 1000;

async function readFilePart(
  part: MultipartFile,
  parse: ParseJunit,
  maxBytes: number,
  prep: UploadPrep | undefined,
  budget: AttemptBudget,
): Promise<ParsedFile> {
  const parsed = await parse(
    part.filename || 'junit.xml',
    part.file,
    maxBytes,
    prep?.basis.identity,
    budget,
    prep,
  );
  part.file.resume();
  if (part.file.truncated) {
    return {
      name: parsed.name,
      attempts: [],
      summary: {
        ...parsed.summary,
        ok: false,
        problems: [{ severity: 'error', message: `the file is larger than ${maxBytes} bytes` }],
      },
    };
  }
  return parsed;
}

/** POST /v1/test-results/upload: multipart with a `meta` JSON part and `junit` file parts. */
export function registerUpload(app: Api, { ctx, parseJunit, ingestGate }: RouteDeps): void {
  const maxBytes = ctx.config.maxFileBytes;
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
        // The body is read only in the upload's turn (gate.ts): memory for a burst of large uploads.
        return ingestGate.run(() => receive(request));
      },
    );
  });

  async function receive(request: FastifyRequest): Promise<UploadResult> {
    let meta: Meta | undefined;
    // Made once meta is known (clients send it first): files are then prepared for ingestion while
    // they are parsed (test ids, known tests: prepare.ts).
    let prep: UploadPrep | undefined;
    const files: ParsedFile[] = [];
    const held = new UploadAttempts(ctx.config.maxUploadAttempts);
    try {
      for await (const part of request.parts()) {
        if (part.fieldname === 'meta') {
          meta = readMeta(
            part.type === 'field' ? String(part.value) : (await part.toBuffer()).toString('utf8'),
          );
        } else if (part.type === 'file') {
          if (meta !== undefined && prep === undefined)
            prep = await prepareUpload(ctx, callerOf(request), meta);
          files.push(held.add(await readFilePart(part, parseJunit, maxBytes, prep, held.budget())));
        }
      }
    } catch (error) {
      // Our own answers (bad meta, limits) as they are; a body busboy cannot read is the client's fault.
      if (error instanceof AppError || (error as { statusCode?: number }).statusCode !== undefined)
        throw error;
      throw new AppError(
        'BAD_REQUEST',
        `The multipart body could not be read: ${(error as Error).message}; send multipart/form-data with a meta part and junit file parts`,
      );
    }
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
    return ingestUpload(ctx, callerOf(request), meta, files, 'multipart', prep);
  }
}
