import { createHmac, randomUUID } from 'node:crypto';
import type { Delivery, WebhookPayload } from './types.ts';

/** sha256=<hex HMAC-SHA256 of body>, as in x-hub-signature-256. */
export function signWebhook(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface OutgoingEvent {
  event: string;
  payload: WebhookPayload;
}

/**
 * Sends webhooks one at a time, in the order they were queued, and records every attempt.
 * Each POST is awaited, and its answer recorded, before the next one starts.
 */
export class WebhookSender {
  readonly deliveries: Delivery[] = [];
  #url: string | null;
  readonly #secret: string;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(url: string | null, secret: string) {
    this.#url = url;
    this.#secret = secret;
  }

  get url(): string | null {
    return this.#url;
  }

  set url(value: string | null) {
    this.#url = value;
  }

  /** Queue events; resolves with their deliveries once they (and everything queued before) were sent. */
  enqueue(events: OutgoingEvent[]): Promise<Delivery[]> {
    if (events.length === 0) return this.#tail.then(() => []);
    const run = this.#tail.then(async () => {
      const sent: Delivery[] = [];
      for (const { event, payload } of events) {
        const body = JSON.stringify(payload);
        sent.push(
          await this.#send({ id: randomUUID(), event, payload, body, signature: this.sign(body) }, false),
        );
      }
      return sent;
    });
    this.#tail = run.catch(() => {});
    return run;
  }

  /** Re-send a recorded delivery byte for byte (same id, body and signature). */
  redeliver(id: string): Promise<Delivery> {
    const original = this.deliveries.find((d) => d.id === id);
    if (!original) return Promise.reject(new Error(`no delivery ${id}`));
    return this.#serial(() => this.#send(original, true));
  }

  /** Send an arbitrary body (string as is, anything else as JSON) with a chosen signature. */
  sendRaw(event: string, body: unknown, signature?: string): Promise<Delivery> {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    let payload: WebhookPayload = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null) payload = parsed as WebhookPayload;
    } catch {
      // not JSON: recorded with an empty payload
    }
    const sig = signature ?? this.sign(text);
    return this.#serial(() =>
      this.#send({ id: randomUUID(), event, payload, body: text, signature: sig }, false),
    );
  }

  sign(body: string): string {
    return signWebhook(this.#secret, body);
  }

  /** Resolves when every queued delivery was attempted (including ones queued while waiting). */
  async flush(): Promise<void> {
    let tail: Promise<unknown>;
    do {
      tail = this.#tail;
      await tail;
    } while (tail !== this.#tail);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn);
    this.#tail = run.catch(() => {});
    return run;
  }

  async #send(
    d: Pick<Delivery, 'id' | 'event' | 'payload' | 'body' | 'signature'>,
    redelivery: boolean,
  ): Promise<Delivery> {
    const delivery: Delivery = { ...d, url: this.#url, status: null, redelivery, at: Date.now() };
    this.deliveries.push(delivery);
    if (this.#url === null) {
      delivery.error = 'no webhook URL configured';
      return delivery;
    }
    try {
      const response = await fetch(this.#url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'GitHub-Hookshot/simulator',
          'x-github-event': d.event,
          'x-github-delivery': d.id,
          'x-github-hook-id': '1',
          'x-hub-signature-256': d.signature,
        },
        body: d.body,
      });
      delivery.status = response.status;
      await response.arrayBuffer().catch(() => undefined);
    } catch (error) {
      delivery.error = error instanceof Error ? error.message : String(error);
    }
    return delivery;
  }
}
