/** Webhooks out: each event POSTed in order to Mainline, with GitLab's headers, and recorded. */
import { randomUUID } from 'node:crypto';
import type { Delivery } from './model.ts';

const EVENTS: Record<string, string> = {
  merge_request: 'Merge Request Hook',
  note: 'Note Hook',
  pipeline: 'Pipeline Hook',
  build: 'Job Hook',
  push: 'Push Hook',
};

export class Webhooks {
  readonly deliveries: Delivery[] = [];
  /** Where webhooks go; undefined stops sending them (as lost deliveries). */
  target: string | undefined;
  readonly #instance: string;
  readonly #secret: string;
  #pending: Promise<void>[] = [];

  constructor(instance: string, secret: string) {
    this.#instance = instance;
    this.#secret = secret;
  }

  /** Waits until every webhook sent so far was answered. */
  async flush(): Promise<void> {
    while (this.#pending.length > 0) {
      const pending = this.#pending;
      this.#pending = [];
      await Promise.all(pending);
    }
  }

  /** Sends one event (`kind` is the payload's object_kind) after those before it. */
  send(kind: string, payload: Record<string, unknown>): void {
    const url = this.target;
    const event = EVENTS[kind] ?? kind;
    const uuid = randomUUID();
    const delivery: Delivery = { event, uuid, payload, status: null, body: '' };
    this.deliveries.push(delivery);
    if (url === undefined) return;
    // Sent in order: each waits for the one before it.
    const previous = this.#pending.at(-1) ?? Promise.resolve();
    this.#pending.push(
      previous.then(async () => {
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'user-agent': 'GitLab/17.5.0',
              'x-gitlab-event': event,
              'x-gitlab-token': this.#secret,
              'x-gitlab-event-uuid': uuid,
              'x-gitlab-webhook-uuid': 'b3c7a7f0-0000-4000-8000-000000000001',
              'idempotency-key': uuid,
              'x-gitlab-instance': this.#instance,
            },
            body: JSON.stringify(payload),
          });
          delivery.status = res.status;
          delivery.body = await res.text();
        } catch (error) {
          delivery.status = 0;
          delivery.body = String(error);
        }
      }),
    );
  }

  /** Sends a delivery again with the same UUID (GitLab's retry or "Resend request"). */
  async redeliver(delivery: Delivery, token = this.#secret): Promise<{ status: number; body: string }> {
    if (this.target === undefined) throw new Error('no webhook URL');
    const res = await fetch(this.target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gitlab-event': delivery.event,
        'x-gitlab-token': token,
        'x-gitlab-event-uuid': delivery.uuid,
        'idempotency-key': delivery.uuid,
      },
      body: JSON.stringify(delivery.payload),
    });
    return { status: res.status, body: await res.text() };
  }
}
