import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import { insertDelivery } from '../../store/forge/github.ts';
import type { AppContext } from '../context.ts';
import { forgetOnWebhook } from '../queue/forge-settings-cache.ts';

/** True when `header` is `sha256=<hex>` of the HMAC-SHA256 of exactly these bytes under `secret`. */
export function validSignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (header === undefined || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface IncomingDelivery {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly signature: string | undefined;
  readonly body: Buffer;
}

/**
 * Checks a GitHub webhook delivery and stores it before it is acknowledged (processing happens
 * afterwards, so a crash loses nothing GitHub was told was received). A redelivery of a stored id is
 * acknowledged and ignored. A missing or wrong signature is a 401 and nothing is stored.
 */
export async function receiveGitHubDelivery(
  ctx: AppContext,
  delivery: IncomingDelivery,
): Promise<{ id: string; duplicate: boolean }> {
  const secret = ctx.config.github?.webhookSecret;
  if (secret === undefined) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'GitHub webhooks are not configured on this server: set MAINLINE_GITHUB_WEBHOOK_SECRET (and the GitHub credentials)',
    );
  }
  if (!validSignature(secret, delivery.body, delivery.signature)) {
    throw new AppError(
      'INVALID_SIGNATURE',
      'The X-Hub-Signature-256 header is missing or does not match the body under the configured webhook secret',
    );
  }
  if (delivery.id === undefined || delivery.event === undefined) {
    throw new AppError('BAD_REQUEST', 'X-GitHub-Delivery and X-GitHub-Event headers are required');
  }
  let payload: { action?: unknown } & Parameters<typeof forgetOnWebhook>[2];
  try {
    payload = JSON.parse(delivery.body.toString('utf8')) as typeof payload;
  } catch {
    throw new AppError('INVALID_JSON', 'The delivery body is not JSON');
  }
  // GitHub always sends an object; `null`, a list or a number would fail below as a TypeError (a 500).
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new AppError('INVALID_JSON', 'The delivery body is not a JSON object');
  }
  const stored = await insertDelivery(ctx.db, {
    id: delivery.id,
    event: delivery.event,
    action: typeof payload.action === 'string' ? payload.action : null,
    payload: delivery.body.toString('utf8'),
    received_at: ctx.now(),
  });
  // Verified: what getQueue remembers of the repository's branches is dropped (forge-settings-cache.ts).
  forgetOnWebhook(ctx, delivery.event, payload);
  return { id: delivery.id, duplicate: !stored };
}
