import multipart from '@fastify/multipart';
import { ingestMultipart } from '../../../app/ingest/receive/multipart.ts';
import { uploadTempDir } from '../../../config.ts';
import { AppError } from '../../../domain/errors.ts';
import { SpoolDir } from '../../../lib/spool.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { UploadResponse } from '../../schemas/upload.ts';
import type { Api, RouteDeps } from '../../types.ts';
import { MAX_META_BYTES, receiveMultipart } from './multipart-body.ts';

/**
 * File parts per upload. Maven Surefire and Gradle write one report per test class, so a large
 * module's upload has hundreds to a thousand files; each costs little (a result entry), and their
 * bytes together are bounded by MAINLINE_UPLOAD_LIMIT.
 */
const MAX_FILES = 1000;

/** POST /v1/test-results/upload: multipart with a `meta` JSON part and `junit` file parts. */
export function registerUpload(app: Api, { ctx, parseJunit, ingestGate }: RouteDeps): void {
  // Bodies being received keep their first MiB in memory and the rest in a file, removed when the
  // request ends: N uploads arriving at once cost N MiB of memory, not N × MAINLINE_UPLOAD_LIMIT.
  const spools = new SpoolDir(uploadTempDir(ctx.config));
  app.register(async (scope) => {
    await scope.register(multipart, {
      throwFileSizeLimit: false,
      limits: {
        fileSize: ctx.config.maxFileBytes,
        files: MAX_FILES,
        fields: 10,
        fieldSize: MAX_META_BYTES,
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
        const received = await receiveMultipart(request, spools, ctx.config);
        try {
          // The body is all here: the upload now takes a turn (gate.ts) to be parsed and stored, shared
          // fairly between organizations. A slow client never holds one.
          return await ingestGate.run(() => ingestMultipart(ctx, caller, received, parseJunit), caller.orgId);
        } finally {
          await received.spool.close();
        }
      },
    );
  });
}
