// Trunk's two-step upload: a signed, expiring URL handed out for a bundle (createBundleUpload), then
// the PUT of the bundle to it (receiveBundle), received whole before it is decoded and stored
// (bundle.ts).
import { randomUUID } from 'node:crypto';
import { AppError } from '../../../domain/errors.ts';
import { type Spool, type SpoolDir, spoolAll } from '../../../lib/spool.ts';
import { findTokenById } from '../../../store/tenancy/tokens.ts';
import {
  type BundleUploadRow,
  claimBundleUpload,
  findBundleUpload,
  findBundleUploadResult,
  insertBundleUpload,
  markBundleConsumed,
  releaseBundleClaim,
} from '../../../store/uploads/bundles.ts';
import type { BundleDecoders } from '../../bundle/decode-pool.ts';
import type { AppContext, Caller } from '../../context.ts';
import { assertForgeGranted } from '../../forge-grants.ts';
import { checkOrgSlug, type RepoRef } from '../../repositories.ts';
import type { UrlSigner } from '../../url-signer.ts';
import type { IngestGate } from '../gate.ts';
import type { ParseJunit } from '../parsing/pool.ts';
import type { UploadMeta } from '../prepare/types.ts';
import type { UploadResult } from '../result.ts';
import { bundleMetaOf, ingestBundle } from './bundle.ts';

/** How long the URL createBundleUpload returns accepts the PUT. */
export const BUNDLE_URL_TTL_MS = 60 * 60 * 1000;
const PURPOSE = 'bundle-upload';
/**
 * A claim on a bundle URL older than this is taken to be left by a server that stopped mid-PUT, and
 * another PUT may claim the URL. Even then nothing is stored twice (the upload_key is the bundle id).
 */
export const BUNDLE_CLAIM_STALE_MS = 15 * 60 * 1000;

/** What createBundleUpload stored: the URL is bound to the token (and organization) that asked for it. */
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
  await assertForgeGranted(ctx, caller, body.repo);
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

export interface BundlePut {
  id: string;
  expires: number;
  signature: string;
  /** The compressed body as it arrives (cut when it stalls: http/body-progress.ts). */
  body: AsyncIterable<Uint8Array>;
  /** The request's Content-Length, if it has one: over MAINLINE_UPLOAD_LIMIT is refused unread. */
  contentLength: number | undefined;
  /** Where the body is received, whole, before it is decoded (bounded memory: lib/spool.ts). */
  spools: SpoolDir;
  validateMeta: (m: unknown) => UploadMeta;
  parseJunit: ParseJunit;
  /**
   * The bundle is decoded and stored in a turn of its organization, taken once its body has
   * arrived: a slow client holds the URL's claim, never a turn.
   */
  gate: IngestGate;
  /** Where zstd and the tar walk run (threads of their own). */
  decoders: BundleDecoders;
}

/**
 * The second half: the PUT of the bundle. The signed URL is the credential (no token, as with a
 * presigned S3 URL), but it is only as good as the token that asked for it: a URL whose token was
 * revoked (or whose organization is gone) is refused. Everything that can refuse or answer the PUT
 * without its body is checked before the body is read: the signature and expiry, the token, and
 * whether the URL was used. A URL that made an upload answers that upload's result again
 * (`duplicate: true`) without decoding anything; while one PUT is receiving a URL's bundle, another
 * PUT to it is a 409 (retry it once the first is done: it then answers the result).
 *
 * Then the body is received whole (at most MAINLINE_UPLOAD_LIMIT bytes, spooled), holding no ingest
 * turn, so a bundle trickling in delays nobody else; only then does the PUT take a turn of its
 * organization (gate.ts) to decode the bundle from what was received and store it.
 */
export async function receiveBundle(
  ctx: AppContext,
  signer: UrlSigner,
  input: BundlePut,
): Promise<UploadResult> {
  const denied = new AppError(
    'FORBIDDEN',
    'This upload URL is not valid: it was altered, has expired, or was never issued',
  );
  if (!signer.verify(PURPOSE, input.id, input.expires, input.signature) || input.expires < ctx.now())
    throw denied;
  const row = await findBundleUpload(ctx.db, input.id);
  if (row === undefined) throw denied;
  const request = JSON.parse(row.request) as StoredRequest;
  await checkIssuer(ctx, row, request);
  if (row.upload_id !== null) return answerAgain(ctx, row.upload_id);
  const limit = ctx.config.uploadLimitBytes;
  if (input.contentLength !== undefined && input.contentLength > limit) throw bundleTooLarge(limit);
  const claimedAt = ctx.now();
  if (!(await claimBundleUpload(ctx.db, row.id, claimedAt, claimedAt - BUNDLE_CLAIM_STALE_MS))) {
    const now = await findBundleUpload(ctx.db, row.id);
    if (now?.upload_id != null) return answerAgain(ctx, now.upload_id);
    throw new AppError(
      'CONFLICT',
      'Another request is uploading the bundle to this URL right now; retry this PUT once it has finished to get its result',
    );
  }
  let stored = false;
  let spool: Spool | undefined;
  try {
    spool = await spoolAll(input.spools, input.body, limit, () => bundleTooLarge(limit));
    const received = spool;
    const result = await input.gate.run(() => storeBundle(ctx, row, request, input, received), row.org_id);
    stored = true;
    return result;
  } finally {
    await spool?.close();
    // Nothing was stored (a refused bundle, a client that went away): the URL may be used again.
    if (!stored) await releaseBundleClaim(ctx.db, row.id, claimedAt);
  }
}

/** A bundle over MAINLINE_UPLOAD_LIMIT as sent; the rest of its body is not read. */
function bundleTooLarge(limit: number): AppError {
  return new AppError(
    'PAYLOAD_TOO_LARGE',
    `The bundle is larger than MAINLINE_UPLOAD_LIMIT (${limit} bytes as sent): upload the test results in several bundles, or ask the operator to raise MAINLINE_UPLOAD_LIMIT`,
    { headers: { connection: 'close' } },
  );
}

/** The URL acts for the token that asked for it: refused once that token is revoked or gone. */
async function checkIssuer(ctx: AppContext, row: BundleUploadRow, request: StoredRequest): Promise<void> {
  const token = await findTokenById(ctx.db, request.tokenId);
  if (token === undefined || token.revoked_at !== null || token.org_id !== row.org_id) {
    throw new AppError(
      'INVALID_TOKEN',
      'The API token that created this upload URL has been revoked (or its organization deleted): create a new upload URL with a valid token',
    );
  }
}

async function answerAgain(ctx: AppContext, uploadId: string): Promise<UploadResult> {
  const result = await findBundleUploadResult(ctx.db, uploadId);
  if (result === undefined)
    throw new AppError(
      'CONFLICT',
      'This upload URL was already used, and its upload is no longer kept; create a new upload URL',
    );
  return { ...(JSON.parse(result) as UploadResult), duplicate: true };
}

/** Decodes the received bundle and stores it as the upload of the token that asked for its URL. */
async function storeBundle(
  ctx: AppContext,
  row: BundleUploadRow,
  request: StoredRequest,
  input: BundlePut,
  spool: Spool,
): Promise<UploadResult> {
  const caller: Caller = {
    tokenId: request.tokenId,
    tokenName: request.tokenName,
    orgId: row.org_id,
    orgSlug: request.orgSlug,
  };
  const result = await ingestBundle(ctx, caller, {
    bytes: spool.read(),
    // Keyed by the bundle id: a bundle is stored once, whatever happens to its URL's claims.
    metaOf: (meta) => bundleMetaOf(meta, request.orgSlug, `bundle:${row.id}`, input.validateMeta),
    beforeStore: () => checkIssuer(ctx, row, request),
    parseJunit: input.parseJunit,
    decoders: input.decoders,
  });
  await markBundleConsumed(ctx.db, row.id, result.upload_id, ctx.now());
  return result;
}
