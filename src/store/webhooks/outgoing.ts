import type { Insertable, Selectable } from 'kysely';
import { chunked, type Queryable } from '../../db/bulk.ts';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from '../schema.ts';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type NewWebhookDeliveryRow = Insertable<WebhookDeliveriesTable>;

export async function insertEndpoint(db: Queryable, row: WebhookEndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export function listEndpoints(db: Queryable, orgId: string): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function countEndpoints(db: Queryable, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export function findEndpoint(
  db: Queryable,
  orgId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Deletes the endpoint and (by cascade) its deliveries; false when the organization has no such endpoint. */
export async function deleteEndpoint(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The enabled endpoints of an organization: what an event is enqueued for. */
export function enabledEndpointsOfOrg(
  db: Queryable,
  orgId: string,
): Promise<Pick<WebhookEndpointRow, 'id' | 'event_types'>[]> {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'event_types'])
    .where('org_id', '=', orgId)
    .where('disabled_at', 'is', null)
    .execute();
}

/**
 * The enabled endpoints of the organization a repository belongs to, with the repository's name:
 * one indexed query, which finds nothing (and costs little) when the organization has no endpoint.
 */
export function enabledEndpointsOfRepo(db: Queryable, repoId: string) {
  return db
    .selectFrom('repositories')
    .innerJoin('webhook_endpoints', 'webhook_endpoints.org_id', 'repositories.org_id')
    .select([
      'webhook_endpoints.id',
      'webhook_endpoints.event_types',
      'repositories.org_id',
      'repositories.host',
      'repositories.owner',
      'repositories.name',
    ])
    .where('repositories.id', '=', repoId)
    .where('webhook_endpoints.disabled_at', 'is', null)
    .execute();
}

export async function insertDeliveries(db: Queryable, rows: readonly NewWebhookDeliveryRow[]): Promise<void> {
  for (const part of chunked(rows, 200)) await db.insertInto('webhook_deliveries').values(part).execute();
}

/** A due delivery with what sending it needs: the endpoint's URL, secret and state, the organization's slug. */
export type DueDelivery = WebhookDeliveryRow & {
  url: string;
  secret: string;
  disabled_at: number | null;
  org_slug: string;
};

/** Pending deliveries whose time has come, oldest due first (by the partial index webhook_deliveries_due). */
export function dueDeliveries(db: Queryable, now: number, limit: number): Promise<DueDelivery[]> {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
    .innerJoin('organizations', 'organizations.id', 'webhook_deliveries.org_id')
    .selectAll('webhook_deliveries')
    .select([
      'webhook_endpoints.url',
      'webhook_endpoints.secret',
      'webhook_endpoints.disabled_at',
      'organizations.slug as org_slug',
    ])
    .where('webhook_deliveries.delivered_at', 'is', null)
    .where('webhook_deliveries.failed_at', 'is', null)
    .where('webhook_deliveries.next_attempt_at', '<=', now)
    .orderBy('webhook_deliveries.next_attempt_at')
    .limit(limit)
    .execute();
}

/**
 * Claims a due delivery for one attempt: moves its next attempt to `until` and counts the attempt,
 * only if nobody did since it was read (its next_attempt_at is still `seen`). One conditional UPDATE,
 * so of two replicas reading the same row only one sends it. True when this caller got it.
 */
export async function claimDelivery(
  db: Queryable,
  id: string,
  seen: number,
  until: number,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ next_attempt_at: until, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('next_attempt_at', '=', seen)
    .where('delivered_at', 'is', null)
    .where('failed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Records the outcome of a claimed attempt, unless the claim (`claimedUntil`) expired and another
 * sender took the delivery meanwhile; false then.
 */
export async function recordAttempt(
  db: Queryable,
  id: string,
  claimedUntil: number,
  outcome: Pick<
    WebhookDeliveryRow,
    'last_status' | 'last_error' | 'delivered_at' | 'failed_at' | 'next_attempt_at'
  >,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ ...outcome, last_error: outcome.last_error?.slice(0, 1000) ?? null })
    .where('id', '=', id)
    .where('next_attempt_at', '=', claimedUntil)
    .where('delivered_at', 'is', null)
    .where('failed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** An endpoint's most recent deliveries, newest first. */
export function listDeliveries(
  db: Queryable,
  endpointId: string,
  limit: number,
): Promise<WebhookDeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Drops delivered and given-up deliveries created before `before`. */
export async function deleteFinishedDeliveriesBefore(db: Queryable, before: number): Promise<number> {
  const result = await db
    .deleteFrom('webhook_deliveries')
    .where('created_at', '<', before)
    .where((eb) => eb.or([eb('delivered_at', 'is not', null), eb('failed_at', 'is not', null)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
