import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/bulk.ts';
import { parseEventTypes, type WebhookEvent, type WebhookEventType } from '../../domain/webhooks.ts';
import {
  enabledEndpointsOfOrg,
  enabledEndpointsOfRepo,
  insertDeliveries,
  type NewWebhookDeliveryRow,
} from '../../store/webhooks/outgoing.ts';

/** The repository an event happened in, as its payload names it. */
export interface EventRepository {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}

interface Subscriber {
  readonly id: string;
  readonly event_types: string;
}

/** One delivery per (event, subscribed endpoint); each event keeps one id across its endpoints. */
function deliveryRows(
  orgId: string,
  endpoints: readonly Subscriber[],
  events: readonly WebhookEvent[],
  now: number,
): NewWebhookDeliveryRow[] {
  const rows: NewWebhookDeliveryRow[] = [];
  const wants = endpoints.map((e) => ({ id: e.id, types: new Set(parseEventTypes(e.event_types)) }));
  for (const event of events) {
    const eventId = randomUUID();
    const payload = JSON.stringify(event.data);
    for (const endpoint of wants) {
      if (!endpoint.types.has(event.type)) continue;
      rows.push({
        id: randomUUID(),
        endpoint_id: endpoint.id,
        org_id: orgId,
        event_id: eventId,
        event_type: event.type,
        payload,
        created_at: now,
        next_attempt_at: now,
        last_status: null,
        last_error: null,
        delivered_at: null,
        failed_at: null,
      });
    }
  }
  return rows;
}

/**
 * Enqueues events of an organization in the caller's transaction (the outbox: they are sent by the
 * dispatcher once the transaction commits, and a crash loses none): one delivery per enabled endpoint
 * subscribed to each event's type. Costs one indexed query when the organization has no endpoint.
 */
export async function enqueueEvents(
  trx: Queryable,
  orgId: string,
  events: readonly WebhookEvent[],
  now: number,
): Promise<number> {
  if (events.length === 0) return 0;
  const endpoints = await enabledEndpointsOfOrg(trx, orgId);
  if (endpoints.length === 0) return 0;
  const rows = deliveryRows(orgId, endpoints, events, now);
  await insertDeliveries(trx, rows);
  return rows.length;
}

/** enqueueEvents for one event. */
export function enqueueEvent(
  trx: Queryable,
  orgId: string,
  type: WebhookEventType,
  payload: Record<string, unknown>,
  now: number,
): Promise<number> {
  return enqueueEvents(trx, orgId, [{ type, data: payload }], now);
}

/**
 * Enqueues events that happened in a repository. `build` makes them (given the repository's name)
 * only when the repository's organization has an enabled endpoint; otherwise this costs one indexed
 * query, however many events there would have been. `found` is told whether it had one.
 */
export async function enqueueRepositoryEvents(
  trx: Queryable,
  repoId: string,
  build: (repository: EventRepository) => readonly WebhookEvent[],
  now: number,
  found?: (present: boolean) => void,
): Promise<number> {
  const endpoints = await enabledEndpointsOfRepo(trx, repoId);
  found?.(endpoints.length > 0);
  const first = endpoints[0];
  if (first === undefined) return 0;
  const events = build({ host: first.host, owner: first.owner, name: first.name });
  const rows = deliveryRows(first.org_id, endpoints, events, now);
  await insertDeliveries(trx, rows);
  return rows.length;
}
