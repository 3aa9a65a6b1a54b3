import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import { AppError } from '../domain/errors.ts';

/**
 * Opaque, tamper-evident page tokens. A token is base64url(JSON payload) + "." + HMAC-SHA256 of it,
 * keyed by a per-installation secret. The payload binds the token to the query it came from
 * (a hash of endpoint, organization, repository, filters and page size), so a token replayed on
 * another query, or edited, is rejected with 400 INVALID_PAGE_TOKEN instead of returning wrong rows.
 */
export interface PagePosition<K> {
  /** Which way to read from the cursor. */
  readonly dir: 'after' | 'before' | 'last';
  /** Sort key of the row to read after or before; absent for 'last'. */
  readonly key?: K;
  /** 0-based index of the page this token leads to. */
  readonly index: number;
}

export class PageTokens {
  // A key object made once: an HMAC keyed by a Buffer makes its key again on every call, which cost
  // about as much as the rest of a token (the MACs are the same).
  readonly #secret: KeyObject;

  constructor(secret: string) {
    this.#secret = createSecretKey(Buffer.from(secret, 'base64url'));
  }

  /** A short stable digest of everything that defines a query. */
  static queryHash(parts: readonly unknown[]): string {
    return createHmac('sha256', 'mainline-query')
      .update(JSON.stringify(parts))
      .digest('base64url')
      .slice(0, 16);
  }

  /** A token carrying `position` (any JSON object), bound to the query hash. */
  sign(query: string, position: object): string {
    const body = Buffer.from(JSON.stringify({ p: position, q: query })).toString('base64url');
    return `${body}.${this.#mac(body)}`;
  }

  /** The position a token carries; undefined for an absent or empty token (the first page). */
  verify<P>(query: string, token: string | undefined): P | undefined {
    if (token === undefined || token === '') return undefined;
    const [body, mac, extra] = token.split('.');
    if (body === undefined || mac === undefined || extra !== undefined || !this.#macMatches(body, mac)) {
      throw invalidPageToken('it was not issued by this server or was altered');
    }
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { p: P; q: string };
    if (payload.q !== query) {
      throw invalidPageToken('it belongs to a different query (repository, filters or page_size changed)');
    }
    return payload.p;
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#secret).update(body).digest('base64url');
  }

  #macMatches(body: string, mac: string): boolean {
    const expected = Buffer.from(this.#mac(body));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

export function invalidPageToken(why: string): AppError {
  return new AppError(
    'INVALID_PAGE_TOKEN',
    `page_query.page_token is not valid here: ${why}. Omit it to start from the first page.`,
    {
      details: [
        {
          path: '$.page_query.page_token',
          expected: 'a page token returned by the previous page of this same query',
          message: `page_token ${why}`,
        },
      ],
    },
  );
}
