import { TokenBuckets } from '../../app/throttle.ts';
import { AppError } from '../../domain/errors.ts';

/** Tokens whose buckets are kept at once; a dropped (least recently used) bucket starts full again. */
const MAX_TOKENS = 100_000;

/**
 * Per-token token bucket: `ratePerSecond` requests per second on average, bursts up to `burst`.
 * Held in this process's memory, so with N replicas behind a balancer a token gets up to N times
 * the rate (documented in the README).
 */
export class RateLimiter {
  readonly #buckets: TokenBuckets;
  readonly #rate: number;

  constructor(ratePerSecond: number, burst: number) {
    this.#rate = ratePerSecond;
    this.#buckets = new TokenBuckets(ratePerSecond, burst, MAX_TOKENS);
  }

  get enabled(): boolean {
    return this.#rate > 0;
  }

  /** Takes one request from the key's bucket; returns the headers to send, or throws 429. */
  take(key: string, now: number): Record<string, string> {
    const taken = this.#buckets.take(key, now);
    if (!taken.ok) {
      throw new AppError(
        'RATE_LIMIT_EXCEEDED',
        `Rate limit of ${this.#rate} requests per second for this API token exceeded; retry after ${taken.retryAfter} s`,
        { headers: { 'retry-after': String(taken.retryAfter), ...this.#headers(0) } },
      );
    }
    return this.#headers(taken.remaining);
  }

  #headers(remaining: number): Record<string, string> {
    return { 'x-ratelimit-limit': String(this.#rate), 'x-ratelimit-remaining': String(remaining) };
  }
}
