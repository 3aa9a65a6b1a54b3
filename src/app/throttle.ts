import { createHash } from 'node:crypto';
import { AppError } from '../domain/errors.ts';
import { Lru } from '../lib/lru.ts';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** What taking from a bucket gave: either what is left, or how long until one is back. */
export type Take =
  | { readonly ok: true; readonly remaining: number }
  | { readonly ok: false; readonly retryAfter: number };

/**
 * Token buckets by key: `ratePerSecond` on average, bursts up to `burst`. At most `maxKeys` buckets
 * are kept (least recently used dropped first), so memory stays bounded however many keys callers
 * make up; a dropped bucket starts full again, which only ever errs towards letting a request in.
 * Held in this process's memory: with N replicas a key gets up to N times the rate.
 */
export class TokenBuckets {
  readonly #buckets: Lru<Bucket>;

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    maxKeys: number,
  ) {
    this.#buckets = new Lru(maxKeys);
  }

  /** Takes one token from the key's bucket if there is one. */
  take(key: string, now: number): Take {
    const bucket = this.#refill(key, now);
    if (bucket.tokens < 1) {
      return { ok: false, retryAfter: Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond)) };
    }
    bucket.tokens -= 1;
    return { ok: true, remaining: Math.floor(bucket.tokens) };
  }

  /** Gives back a token taken by `take` (the request turned out not to count). */
  refund(key: string, now: number): void {
    const bucket = this.#refill(key, now);
    bucket.tokens = Math.min(this.burst, bucket.tokens + 1);
  }

  #refill(key: string, now: number): Bucket {
    const bucket = this.#buckets.get(key) ?? { tokens: this.burst, updatedAt: now };
    const elapsed = Math.max(0, now - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(this.burst, bucket.tokens + elapsed * this.ratePerSecond);
    bucket.updatedAt = now;
    this.#buckets.set(key, bucket);
    return bucket;
  }
}

/**
 * The key of a client address: an IPv6 client is counted by its /64 (one host usually holds the whole
 * prefix, so counting single addresses would let it make up fresh ones), an IPv4-mapped one as IPv4.
 */
export function addressKey(address: string | undefined): string {
  // A socket that closed before its address was read has none: such clients share one bucket.
  const ip = address ?? 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!ip.includes(':')) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** A request let through by `AuthThrottle.admit`: report how authentication went. */
export interface Admission {
  /** The token was valid: its reservation is given back and it is remembered as good. */
  succeeded(): void;
  /** The token was unknown or revoked: the reservation stays taken. */
  failed(): void;
  /** Authentication could not be decided (e.g. the database failed): nothing is counted. */
  abandoned(): void;
}

/**
 * The limit before authentication (finding: bad tokens and sign-ins were not limited): per client
 * address, failed authentications and dashboard sign-in attempts share one token bucket
 * (MAINLINE_AUTH_FAIL_LIMIT per minute, MAINLINE_AUTH_FAIL_BURST at once). A valid token is never
 * counted; once an address has spent its bucket only tokens this process has already seen succeed
 * get past it, without the database being asked, so guesses from that address learn nothing.
 */
export class AuthThrottle {
  readonly #buckets: TokenBuckets;
  /** Hashes of tokens that authenticated recently (never the tokens themselves). */
  readonly #good: Lru<true>;
  readonly #perMinute: number;

  constructor(options: { perMinute: number; burst: number; maxAddresses: number }) {
    this.#perMinute = options.perMinute;
    this.#buckets = new TokenBuckets(options.perMinute / 60, options.burst, options.maxAddresses);
    this.#good = new Lru(options.maxAddresses);
  }

  get enabled(): boolean {
    return this.#perMinute > 0;
  }

  /**
   * Before a token is looked up: reserves one failure of the address's budget (given back if the
   * token is good). Throws 429 when the budget is spent, unless the token is one seen to succeed.
   */
  admit(ip: string | undefined, token: string, now: number): Admission {
    if (!this.enabled) return NO_OP;
    const key = addressKey(ip);
    const hash = hashOf(token);
    const taken = this.#buckets.take(key, now);
    if (!taken.ok) {
      if (this.#good.get(hash) === undefined) throw this.#limited(taken.retryAfter, 'failed authentications');
      return {
        succeeded: () => {},
        failed: () => this.#good.delete(hash),
        abandoned: () => {},
      };
    }
    return {
      succeeded: () => {
        this.#buckets.refund(key, now);
        this.#good.set(hash, true);
      },
      failed: () => this.#good.delete(hash),
      abandoned: () => this.#buckets.refund(key, now),
    };
  }

  /** Counts a failure that cost nothing to detect (a wrong /metrics token); throws 429 when the budget is spent. */
  fail(ip: string | undefined, now: number): void {
    if (!this.enabled) return;
    const taken = this.#buckets.take(addressKey(ip), now);
    if (!taken.ok) throw this.#limited(taken.retryAfter, 'failed authentications');
  }

  /** Counts a dashboard sign-in attempt, good or bad; the seconds to wait when the budget is spent. */
  signIn(ip: string | undefined, now: number): number | undefined {
    if (!this.enabled) return undefined;
    const taken = this.#buckets.take(addressKey(ip), now);
    return taken.ok ? undefined : taken.retryAfter;
  }

  #limited(retryAfter: number, what: string): AppError {
    return new AppError(
      'RATE_LIMIT_EXCEEDED',
      `Too many ${what} from this address (limit ${this.#perMinute} per minute); retry after ${retryAfter} s`,
      { headers: { 'retry-after': String(retryAfter) } },
    );
  }
}

const NO_OP: Admission = { succeeded: () => {}, failed: () => {}, abandoned: () => {} };
