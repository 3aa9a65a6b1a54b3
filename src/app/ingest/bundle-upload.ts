import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { AppError } from '../../domain/errors.ts';
import {
  type BundleUploadRow,
  findBundleUpload,
  insertBundleUpload,
  markBundleConsumed,
} from '../../store/bundles.ts';
import { type BundleResult, extractBundle, toUploadMeta } from '../bundle/index.ts';
import type { AppContext, Caller } from '../context.ts';
import { checkOrgSlug, type RepoRef } from '../repositories.ts';
import type { UrlSigner } from '../url-signer.ts';
import type { IngestGate } from './gate.ts';
import { ingestUpload, prepareUpload, type UploadMeta } from './ingest.ts';
import { type ParsedFile, UploadAttempts } from './parse-file.ts';
import type { ParseJunit } from './parser-pool.ts';
import type { UploadResult } from './result.ts';

/** How long the URL createBundleUpload returns accepts the PUT. */
export const BUNDLE_URL_TTL_MS = 60 * 60 * 1000;
const PURPOSE = 'bundle-upload';

interface StoredRequest {
  repo: RepoRef;
  orgSlug: string;
  tokenId: string;
  tokenName: string;
}

/** The first half of Trunk's upload flow: a signed, expiring URL to PUT the bundle to. */
export async function createBundleUpload(
  ctx: AppContext,
  caller: Caller,
  signer: UrlSigner,
  body: { repo: RepoRef; orgUrlSlug: string },
) {
  checkOrgSlug(caller, body.orgUrlSlug);
  const id = randomUUID();
  const now = ctx.now();
  const expiresAt = now + BUNDLE_URL_TTL_MS;
  const request: StoredRequest = {
    repo: body.repo,
    orgSlug: caller.orgSlug,
    tokenId: caller.tokenId,
    tokenName: caller.tokenName,
  };
  await insertBundleUpload(ctx.db, {
    id,
    org_id: caller.orgId,
    request: JSON.stringify(request),
    created_at: now,
    expires_at: expiresAt,
    consumed_at: null,
    upload_id: null,
  });
  const signature = signer.sign(PURPOSE, id, expiresAt);
  const url = `${ctx.config.publicUrl}/v1/metrics/bundle-uploads/${id}?expires=${expiresAt}&signature=${signature}`;
  return { id, idV2: id, url, key: `${caller.orgSlug}/${id}/bundle.tar.zstd` };
}

const STATUS_OF: Record<
  Exclude<BundleResult, { ok: true }>['code'],
  'UNSUPPORTED_MEDIA_TYPE' | 'BAD_REQUEST' | 'PAYLOAD_TOO_LARGE' | 'VALIDATION_FAILED'
> = {
  unsupported_format: 'UNSUPPORTED_MEDIA_TYPE',
  corrupt: 'BAD_REQUEST',
  too_large: 'PAYLOAD_TOO_LARGE',
  invalid_meta: 'VALIDATION_FAILED',
};

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/**
 * The second half: the PUT of the bundle. The signed URL is the credential (no token, as with a
 * presigned S3 URL). The bundle id is the upload_key, so a PUT repeated after a lost response is
 * answered with the same result and ingests nothing twice.
 */
export async function receiveBundle(
  ctx: AppContext,
  signer: UrlSigner,
  input: {
    id: string;
    expires: number;
    signature: string;
    body: Readable;
    validateMeta: (m: unknown) => UploadMeta;
    parseJunit: ParseJunit;
    /** The body is read in the upload's turn, once the URL is known to be good. */
    gate: IngestGate;
  },
): Promise<UploadResult> {
  const denied = new AppError(
    'FORBIDDEN',
    'This upload URL is not valid: it was altered, has expired, or was never issued',
  );
  if (!signer.verify(PURPOSE, input.id, input.expires, input.signature) || input.expires < ctx.now())
    throw denied;
  const row = await findBundleUpload(ctx.db, input.id);
  if (row === undefined) throw denied;
  return input.gate.run(() => ingestBundle(ctx, row, input));
}

async function ingestBundle(
  ctx: AppContext,
  row: BundleUploadRow,
  input: { body: Readable; validateMeta: (m: unknown) => UploadMeta; parseJunit: ParseJunit },
): Promise<UploadResult> {
  const request = JSON.parse(row.request) as StoredRequest;
  const bundle = await extractBundle(input.body, { maxFileBytes: ctx.config.maxFileBytes });
  if (!bundle.ok) throw new AppError(STATUS_OF[bundle.code], `The bundle could not be read: ${bundle.error}`);
  const mapped = toUploadMeta(bundle.meta, request.orgSlug);
  if (!mapped.ok)
    throw new AppError('VALIDATION_FAILED', `The bundle's meta.json is not usable: ${mapped.error}`);
  const meta = input.validateMeta({ ...mapped.meta, upload_key: `bundle:${row.id}` });
  const caller: Caller = {
    tokenId: request.tokenId,
    tokenName: request.tokenName,
    orgId: row.org_id,
    orgSlug: request.orgSlug,
  };
  const prep = await prepareUpload(ctx, caller, meta);
  const files: ParsedFile[] = [];
  const held = new UploadAttempts(ctx.config.maxUploadAttempts);
  for (const f of bundle.files) {
    const name = f.originalPath ?? f.name;
    const parsed = await input.parseJunit(
      name,
      once(f.bytes),
      ctx.config.maxFileBytes,
      prep.basis.identity,
      held.budget(),
      prep,
    );
    files.push(held.add(parsed));
  }
  const result = await ingestUpload(ctx, caller, meta, files, 'bundle', prep);
  if (row.consumed_at === null) await markBundleConsumed(ctx.db, row.id, result.upload_id, ctx.now());
  return result;
}
