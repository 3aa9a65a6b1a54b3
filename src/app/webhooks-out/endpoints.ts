import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import {
  parseEventTypes,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  webhookUrl,
} from '../../domain/webhooks.ts';
import {
  countEndpoints,
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from '../../store/webhooks/outgoing.ts';
import type { AppContext, Caller } from '../context.ts';
import { literalHost, type Refusal, urlRefusal } from './address-policy.ts';

/**
 * Whether a repository's organization has an enabled webhook endpoint, as last looked up by this process,
 * so that a merge-queue step finishing a PR spares the lookup (~0.14 ms on SQLite) while nothing changed.
 * Every endpoint write in the process (createWebhook, deleteWebhook: the only ones) forgets it all, before
 * and after writing, so an endpoint added or deleted counts from the next event. Trusted on SQLite only
 * (app/queue/apply.ts): one server per database file, so every endpoint write goes through this process;
 * on PostgreSQL another replica may add one. One per app (app/caches.ts).
 */
export class EndpointPresence {
  readonly #known = new Map<string, boolean>();
  #generation = 0;

  /** true or false as last looked up for the repository, undefined when not known since the last write. */
  of(repoId: string): boolean | undefined {
    return this.#known.get(repoId);
  }

  /** The generation a lookup starts in: its answer is kept only if no endpoint was written meanwhile. */
  get generation(): number {
    return this.#generation;
  }

  /** Keeps what a lookup that started in `generation` found, unless an endpoint was written since. */
  learn(repoId: string, present: boolean, generation: number): void {
    if (generation === this.#generation) this.#known.set(repoId, present);
  }

  /** An endpoint is being (or was) written: nothing known holds any more. */
  changed(): void {
    this.#generation += 1;
    this.#known.clear();
  }

  /** Runs an endpoint write, forgetting what is known before it and after it (even if it fails). */
  async writing<T>(write: () => Promise<T>): Promise<T> {
    this.changed();
    try {
      return await write();
    } finally {
      this.changed();
    }
  }
}

/** Endpoints one organization may have. */
export const MAX_ENDPOINTS_PER_ORG = 20;

export interface WebhookRecord {
  readonly id: string;
  readonly url: string;
  readonly events: WebhookEventType[];
  readonly description: string | null;
  readonly created_at: string;
  readonly disabled: boolean;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function record(row: WebhookEndpointRow): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    events: parseEventTypes(row.event_types),
    description: row.description,
    created_at: new Date(row.created_at).toISOString(),
    disabled: row.disabled_at !== null,
  };
}

function notFound(id: string): AppError {
  return new AppError('WEBHOOK_NOT_FOUND', `No webhook with id ${id} in this organization`);
}

/** The 400 for a URL whose address the policy refuses, saying what is refused and what allows it. */
function refusedUrl(url: URL, refused: Refusal): AppError {
  const host =
    literalHost(url) === null
      ? `${url.hostname} resolves only to refused addresses (${refused.reason})`
      : refused.reason;
  const rule = refused.allowable
    ? 'private and loopback addresses are refused unless the server sets MAINLINE_WEBHOOK_ALLOW_PRIVATE=1'
    : 'link-local, cloud metadata, unspecified, broadcast, multicast and reserved addresses are refused whatever the server settings';
  const expected = 'a URL whose host is a public address';
  return new AppError('VALIDATION_FAILED', `Invalid request: $.url is not allowed: ${host}; ${rule}`, {
    details: [{ path: '$.url', expected, message: `$.url must be ${expected} (${host}; ${rule})` }],
  });
}

/** A new endpoint; its secret is returned here and never again. */
export async function createWebhook(
  ctx: AppContext,
  caller: Caller,
  input: { url: string; events: readonly WebhookEventType[]; description?: string | undefined },
): Promise<WebhookRecord & { secret: string }> {
  const url = webhookUrl(input.url.trim());
  if (url === null) {
    const expected = 'an absolute http:// or https:// URL';
    throw new AppError('VALIDATION_FAILED', `Invalid request: $.url must be ${expected}`, {
      details: [{ path: '$.url', expected, message: `$.url must be ${expected}` }],
    });
  }
  const refused = await urlRefusal(url, ctx.config.webhookAllowPrivate);
  if (refused !== null) throw refusedUrl(url, refused);
  if ((await countEndpoints(ctx.db, caller.orgId)) >= MAX_ENDPOINTS_PER_ORG) {
    throw new AppError(
      'BAD_REQUEST',
      `Organization "${caller.orgSlug}" already has ${MAX_ENDPOINTS_PER_ORG} webhooks, the most it may have; delete one first`,
    );
  }
  const row: WebhookEndpointRow = {
    id: randomUUID(),
    org_id: caller.orgId,
    url: url.href,
    secret: `whsec_${randomBytes(32).toString('base64url')}`,
    event_types: JSON.stringify(WEBHOOK_EVENT_TYPES.filter((t) => input.events.includes(t))),
    description: input.description?.trim() || null,
    created_at: ctx.now(),
    disabled_at: null,
  };
  await ctx.caches.webhookEndpoints.writing(() => insertEndpoint(ctx.db, row));
  return { ...record(row), secret: row.secret };
}

export async function listWebhooks(ctx: AppContext, caller: Caller): Promise<WebhookRecord[]> {
  return (await listEndpoints(ctx.db, caller.orgId)).map(record);
}

/** Deletes the endpoint with its deliveries (pending ones are not sent). */
export async function deleteWebhook(ctx: AppContext, caller: Caller, id: string): Promise<void> {
  const deleted = await ctx.caches.webhookEndpoints.writing(() =>
    deleteEndpoint(ctx.db, caller.orgId, id.toLowerCase()),
  );
  if (!deleted) throw notFound(id);
}

function deliveryRecord(row: WebhookDeliveryRow) {
  const status: DeliveryStatus =
    row.delivered_at !== null ? 'delivered' : row.failed_at !== null ? 'failed' : 'pending';
  return {
    id: row.id,
    event_id: row.event_id,
    type: row.event_type,
    status,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    created_at: new Date(row.created_at).toISOString(),
    next_attempt_at: status === 'pending' ? iso(row.next_attempt_at) : null,
    delivered_at: iso(row.delivered_at),
    failed_at: iso(row.failed_at),
  };
}

/** The endpoint's most recent deliveries, newest first. */
export async function listWebhookDeliveries(ctx: AppContext, caller: Caller, id: string, limit: number) {
  const endpoint = await findEndpoint(ctx.db, caller.orgId, id.toLowerCase());
  if (endpoint === undefined) throw notFound(id);
  return (await listDeliveries(ctx.db, endpoint.id, limit)).map(deliveryRecord);
}
