import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { retryDelay, webhookUrl } from '../../domain/webhooks.ts';
import {
  claimDelivery,
  type DueDelivery,
  deleteFinishedDeliveriesBefore,
  dueDeliveries,
  recordAttempt,
} from '../../store/webhooks/outgoing.ts';
import type { AppContext } from '../context.ts';
import { AddressRefusedError, literalHost, pinnedLookup, type Resolve, refusal } from './address-policy.ts';
import { deliveryBody, signature } from './body.ts';

/** How long a receiver has to answer, by default. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** A claim outlives the attempt's timeout by this much, so a slow attempt is never sent twice. */
const CLAIM_MARGIN_MS = 30_000;
/** Deliveries read per pass, and sent at once. */
const BATCH = 100;
const CONCURRENCY = 8;
/** Delivered and given-up deliveries are kept this long (POST /v1/webhooks/deliveries shows them). */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;
const PRUNE_EVERY_MS = 3_600_000;

type Log = {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
};

export interface WebhookDispatcherOptions {
  /** How host names are resolved before connecting (getaddrinfo by default); every answer is checked. */
  readonly resolve?: Resolve;
  /** Milliseconds a receiver has to answer (DEFAULT_TIMEOUT_MS). */
  readonly timeoutMs?: number;
}

interface AttemptResult {
  readonly ok: boolean;
  readonly status: number | null;
  readonly error: string | null;
}

/** Fixed texts for the errors a connection can end with, by node's error code. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed by the receiver',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed (temporary DNS failure)',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/**
 * last_error for a failed attempt: a fixed reason chosen by the error's code, never its message (a
 * parser or TLS message can quote what the receiver sent, e.g. its certificate's names).
 */
function describeError(err: unknown, timeoutMs: number): string {
  if (err instanceof AddressRefusedError) return err.message;
  const e = err as { name?: unknown; code?: unknown };
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return `no response within ${timeoutMs} ms`;
  const code = typeof e.code === 'string' && /^[A-Z][A-Z0-9_]{1,60}$/.test(e.code) ? e.code : null;
  if (code === null) return 'request failed';
  const known = REASONS[code];
  if (known !== undefined) return known;
  if (code.startsWith('HPE_')) return 'the receiver did not answer with valid HTTP';
  if (/CERT|TLS|SSL/.test(code)) return `TLS handshake failed (${code})`;
  return `request failed (${code})`;
}

/** last_error for a non-2xx answer: its status only, nothing of its headers or body. */
function describeStatus(status: number): string {
  if (status >= 300 && status < 400) return `receiver answered ${status} (redirects are not followed)`;
  return `receiver answered ${status}`;
}

/**
 * POSTs `body` and resolves with the answer's status. The response is destroyed unread: nothing the
 * receiver sends back is kept, so a webhook cannot be used to read what the server can reach.
 */
function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  lookup: LookupFunction,
  signal: AbortSignal,
): Promise<number> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup,
        // A fresh connection per delivery, always through `lookup` (a pooled socket could outlive a check).
        agent: false,
        signal,
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.destroy();
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends the outgoing-webhook outbox: each due delivery is claimed (one conditional UPDATE, so two
 * replicas never both send it), POSTed signed, and marked delivered on a 2xx answer; anything else is
 * tried again with growing delays until it is given up (domain/webhooks.ts).
 */
export class WebhookDispatcher {
  readonly #ctx: AppContext;
  readonly #log: Log;
  readonly #resolve: Resolve | undefined;
  readonly #timeoutMs: number;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(ctx: AppContext, log: Log, options: WebhookDispatcherOptions = {}) {
    this.#ctx = ctx;
    this.#log = log;
    this.#resolve = options.resolve;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** One pass: sends what is due (up to one batch); returns how many deliveries it attempted. */
  async runOnce(): Promise<number> {
    const now = this.#ctx.now();
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now;
      await deleteFinishedDeliveriesBefore(this.#ctx.db, now - DELIVERY_RETENTION_MS);
    }
    const due = await dueDeliveries(this.#ctx.db, now, BATCH);
    let attempted = 0;
    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        const delivery = due[next++] as DueDelivery;
        if (await this.#deliver(delivery)) attempted++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
    return attempted;
  }

  /** Claims and sends one delivery; false when another sender had claimed it. */
  async #deliver(d: DueDelivery): Promise<boolean> {
    const claimedUntil = this.#ctx.now() + this.#timeoutMs + CLAIM_MARGIN_MS;
    if (!(await claimDelivery(this.#ctx.db, d.id, d.next_attempt_at, claimedUntil))) return false;
    const attempts = d.attempts + 1;
    const result = await this.#send(d).catch(
      (err: unknown): AttemptResult => ({
        ok: false,
        status: null,
        error: describeError(err, this.#timeoutMs),
      }),
    );
    const now = this.#ctx.now();
    const delay = result.ok ? null : retryDelay(attempts);
    const giveUp = !result.ok && (delay === null || d.disabled_at !== null);
    const recorded = await recordAttempt(this.#ctx.db, d.id, claimedUntil, {
      last_status: result.status,
      last_error: result.error,
      delivered_at: result.ok ? now : null,
      failed_at: giveUp ? now : null,
      next_attempt_at: result.ok || giveUp || delay === null ? claimedUntil : now + delay,
    });
    const where = { delivery: d.id, endpoint: d.endpoint_id, type: d.event_type, attempts };
    if (!recorded) this.#log.warn(where, 'webhook delivery was taken over by another sender');
    else if (giveUp) this.#log.warn({ ...where, error: result.error }, 'webhook delivery given up');
    else if (!result.ok)
      this.#log.info({ ...where, error: result.error }, 'webhook delivery failed; will retry');
    return true;
  }

  async #send(d: DueDelivery): Promise<AttemptResult> {
    if (d.disabled_at !== null) return { ok: false, status: null, error: 'the endpoint is disabled' };
    const url = webhookUrl(d.url);
    if (url === null) return { ok: false, status: null, error: 'the endpoint URL is not http(s)' };
    // Checked on every attempt, not only at creation: the setting or the name's DNS may have changed.
    const allowPrivate = this.#ctx.config.webhookAllowPrivate;
    const literal = literalHost(url);
    const refused = literal === null ? null : refusal(literal, allowPrivate);
    if (refused !== null) throw new AddressRefusedError(refused);
    const body = deliveryBody(d, this.#ctx.config.publicUrl);
    const status = await post(
      url,
      {
        'content-type': 'application/json',
        'user-agent': 'Mainline-Webhooks',
        'x-mainline-event': d.event_type,
        'x-mainline-delivery': d.id,
        'x-mainline-signature-256': signature(d.secret, body),
      },
      body,
      pinnedLookup(allowPrivate, this.#resolve),
      AbortSignal.timeout(this.#timeoutMs),
    );
    // A redirect is an answer, not a success: following it would send the event somewhere else.
    if (status >= 200 && status < 300) return { ok: true, status, error: null };
    return { ok: false, status, error: describeStatus(status) };
  }
}
