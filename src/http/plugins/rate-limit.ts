import { AppError } from '../../domain/errors.ts';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Per-token token bucket: `ratePerSecond` requests per second on average, bursts up to `burst`.
 * Held in this process's memory, so with N replicas behind a balancer a token gets up to N times
 * the rate (documented in the README).
 */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #rate: number;
  readonly #burst: number;

  constructor(ratePerSecond: number, burst: number) {
    this.#rate = ratePerSecond;
    this.#burst = burst;
  }

  get enabled(): boolean {
    return this.#rate > 0;
  }

  /** Takes one request from the key's bucket; returns the headers to send, or throws 429. */
  take(key: string, now: number): Record<string, string> {
    const bucket = this.#refill(key, now);
    if (bucket.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate));
      throw new AppError(
        'RATE_LIMIT_EXCEEDED',
        `Rate limit of ${this.#rate} requests per second for this API token exceeded; retry after ${retryAfter} s`,
        { headers: { 'retry-after': String(retryAfter), ...this.#headers(0) } },
      );
    }
    bucket.tokens -= 1;
    return this.#headers(Math.floor(bucket.tokens));
  }

  #refill(key: string, now: number): Bucket {
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, updatedAt: now };
    const elapsed = Math.max(0, now - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(this.#burst, bucket.tokens + elapsed * this.#rate);
    bucket.updatedAt = now;
    this.#buckets.set(key, bucket);
    return bucket;
  }

  #headers(remaining: number): Record<string, string> {
    return { 'x-ratelimit-limit': String(this.#rate), 'x-ratelimit-remaining': String(remaining) };
  }
}
