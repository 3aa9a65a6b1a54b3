import type { AppContext } from '../app/context.ts';
import { deliveryBody, signature } from '../app/webhooks-out/body.ts';
import { retryDelay, webhookUrl } from '../domain/webhooks.ts';
import {
  claimDelivery,
  type DueDelivery,
  deleteFinishedDeliveriesBefore,
  dueDeliveries,
  recordAttempt,
} from '../store/webhooks-out.ts';
import { type Background, runPeriodically } from './periodic.ts';

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
/** Characters of a failed response's body kept in last_error. */
const ERROR_BODY_CHARS = 300;

type Log = {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
};

export interface WebhookDispatcherOptions {
  /** The HTTP client; the global fetch by default. */
  readonly fetch?: typeof fetch;
  /** Milliseconds a receiver has to answer (DEFAULT_TIMEOUT_MS). */
  readonly timeoutMs?: number;
}

interface AttemptResult {
  readonly ok: boolean;
  readonly status: number | null;
  readonly error: string | null;
}

/** The first characters of a response body, read without waiting for (or buffering) the rest. */
async function bodyStart(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ERROR_BODY_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, ERROR_BODY_CHARS).replace(/\s+/g, ' ').trim();
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no response within ${timeoutMs} ms`;
  const cause = e.cause?.code ?? e.cause?.message;
  return cause !== undefined ? `${e.message ?? 'request failed'}: ${cause}` : String(e.message ?? err);
}

/**
 * Sends the outgoing-webhook outbox: each due delivery is claimed (one conditional UPDATE, so two
 * replicas never both send it), POSTed signed, and marked delivered on a 2xx answer; anything else is
 * tried again with growing delays until it is given up (domain/webhooks.ts).
 */
export class WebhookDispatcher {
  readonly #ctx: AppContext;
  readonly #log: Log;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(ctx: AppContext, log: Log, options: WebhookDispatcherOptions = {}) {
    this.#ctx = ctx;
    this.#log = log;
    this.#fetch = options.fetch ?? fetch;
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
    const body = deliveryBody(d, this.#ctx.config.publicUrl);
    const response = await this.#fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Mainline-Webhooks',
        'x-mainline-event': d.event_type,
        'x-mainline-delivery': d.id,
        'x-mainline-signature-256': signature(d.secret, body),
      },
      body,
      // A redirect is an answer, not a success: following it would send the event somewhere else.
      redirect: 'manual',
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    if (response.status >= 200 && response.status < 300) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: true, status: response.status, error: null };
    }
    const text = await bodyStart(response).catch(() => '');
    return {
      ok: false,
      status: response.status,
      error: `HTTP ${response.status}${text === '' ? '' : `: ${text}`}`,
    };
  }
}

/** Runs dispatcher passes every `intervalMs` (never two at once) until stopped; errors are logged. */
export function startWebhookDispatcher(
  dispatcher: WebhookDispatcher,
  intervalMs: number,
  log: Pick<Log, 'error'>,
): Background {
  return runPeriodically(
    () => dispatcher.runOnce(),
    intervalMs,
    (err) => log.error({ err }, 'webhook dispatcher pass failed'),
  );
}
