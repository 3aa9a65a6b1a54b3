import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { BundleDecoders, type BundleDecodeStats } from '../../../app/bundle/decode-pool.ts';
import type { UploadMeta as Meta } from '../../../app/ingest/prepare/types.ts';
import { receiveBundle } from '../../../app/ingest/receive/bundle-url.ts';
import { uploadTempDir } from '../../../config.ts';
import { AppError } from '../../../domain/errors.ts';
import { SpoolDir } from '../../../lib/spool.ts';
import { bodyChunks } from '../../body-progress.ts';
import { validatorFor } from '../../meta.ts';
import { ErrorEnvelope } from '../../schemas/common.ts';
import { UploadMeta, UploadResponse } from '../../schemas/upload.ts';
import type { Api, RouteDeps } from '../../types.ts';

const validateMeta = validatorFor<Meta>(UploadMeta, 'bundle meta');

/** Each app's bundle decoders, by its HTTP server (shared by all of an app's scopes). */
const decodersByServer = new WeakMap<object, BundleDecoders>();

/** What an app's bundle decoders did (decodings started, bytes decoded, the thread): a test hook. */
export function bundleDecodeStats(app: FastifyInstance): BundleDecodeStats | undefined {
  return decodersByServer.get(app.server)?.stats;
}

/**
 * Routes whose body is not JSON and that need no token: the PUT of a bundle to the signed URL
 * (the URL is the credential, like a presigned S3 URL) and the uploader's telemetry.
 */
export async function registerRawRoutes(
  app: Api,
  { ctx, urlSigner, parseJunit, ingestGate }: RouteDeps,
): Promise<void> {
  // Bundles are decoded on threads of their own, at most one per ingest turn kept between PUTs.
  const decoders = new BundleDecoders(ctx.config.ingestConcurrency);
  decodersByServer.set(app.server, decoders);
  // A bundle is received whole before it is decoded: its first MiB in memory, the rest in a file.
  const spools = new SpoolDir(uploadTempDir(ctx.config));
  app.addHook('onClose', () => decoders.close());
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.put(
    '/metrics/bundle-uploads/:id',
    {
      schema: {
        tags: ['test results'],
        summary:
          'PUT the bundle (tar + zstd with meta.json and JUnit files) to the URL createBundleUpload returned',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        querystring: Type.Object({ expires: Type.Integer(), signature: Type.String() }),
        response: {
          200: UploadResponse,
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
          409: ErrorEnvelope,
          413: ErrorEnvelope,
          415: ErrorEnvelope,
        },
      },
    },
    async (request) => {
      const length = request.headers['content-length'];
      return receiveBundle(ctx, urlSigner, {
        id: request.params.id,
        expires: request.query.expires,
        signature: request.query.signature,
        // A body that stops arriving is cut with 408 (body-progress.ts).
        body: bodyChunks((request.body ?? request.raw) as Readable, ctx.config.bodyStallSeconds),
        contentLength: length === undefined ? undefined : Number(length),
        spools,
        validateMeta,
        parseJunit,
        gate: ingestGate,
        decoders,
      });
    },
  );
  app.post(
    '/flakytests-cli/upload-metrics',
    {
      schema: {
        tags: ['test results'],
        summary: 'Uploader telemetry: accepted and ignored',
        response: { 200: Type.Object({}), 413: ErrorEnvelope },
      },
    },
    async (request) => {
      // Read and dropped, but never more than the body limit (the route needs no token).
      let bytes = 0;
      const body = request.body as Readable | undefined;
      if (body !== undefined && typeof body[Symbol.asyncIterator] === 'function') {
        for await (const chunk of body) {
          bytes += (chunk as Buffer).length;
          if (bytes > ctx.config.bodyLimitBytes) {
            body.destroy();
            throw new AppError(
              'PAYLOAD_TOO_LARGE',
              `The request body is larger than the limit of ${ctx.config.bodyLimitBytes} bytes`,
            );
          }
        }
      }
      return {};
    },
  );
}
