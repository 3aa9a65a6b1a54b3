import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The dashboard's sign-in session: a cookie signed with HMAC-SHA256 under an instance secret. It
 * carries the API token's id (never the token), an expiry and a random session id, nothing else;
 * every request checks the signature and the expiry here, then the token row (revoked → signed out).
 *
 *   v1.<tokenId>.<expiresAt>.<sid>.<mac>   mac = HMAC(secret, "session|v1|tokenId|expiresAt|sid")
 *
 * The CSRF token of a session is HMAC(secret, "csrf|<cookie payload>"): it changes with every
 * sign-in, needs no storage, and cannot be computed without the secret.
 */
export const SESSION_COOKIE = 'mainline_session';
/** How long a sign-in lasts (the cookie's Max-Age and the signed expiry). */
export const SESSION_TTL_MS = 12 * 3_600_000;

export interface SessionClaims {
  readonly tokenId: string;
  readonly expiresAt: number;
  readonly sid: string;
}

const ID = /^[A-Za-z0-9-]{1,64}$/;
const SID = /^[A-Za-z0-9_-]{16,64}$/;

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class Sessions {
  readonly #secret: string;
  readonly secure: boolean;

  constructor(secret: string, options: { secure: boolean }) {
    this.#secret = secret;
    this.secure = options.secure;
  }

  #mac(purpose: string, payload: string): string {
    return createHmac('sha256', this.#secret).update(`${purpose}|${payload}`).digest('base64url');
  }

  /** A new session for the token, valid for SESSION_TTL_MS from now: the cookie's value. */
  issue(tokenId: string, now: number): string {
    const payload = `v1.${tokenId}.${now + SESSION_TTL_MS}.${randomBytes(18).toString('base64url')}`;
    return `${payload}.${this.#mac('session', payload)}`;
  }

  /** The claims of a well-signed, unexpired cookie value; undefined otherwise. */
  verify(value: string | undefined, now: number): SessionClaims | undefined {
    if (value === undefined) return undefined;
    const parts = value.split('.');
    if (parts.length !== 5 || parts[0] !== 'v1') return undefined;
    const [, tokenId = '', expires = '', sid = '', mac = ''] = parts;
    if (!ID.test(tokenId) || !/^\d{1,16}$/.test(expires) || !SID.test(sid)) return undefined;
    if (!equal(mac, this.#mac('session', parts.slice(0, 4).join('.')))) return undefined;
    const expiresAt = Number(expires);
    if (expiresAt <= now) return undefined;
    return { tokenId, expiresAt, sid };
  }

  /** The CSRF token of the session whose cookie value this is. */
  csrfToken(cookieValue: string): string {
    return this.#mac('csrf', cookieValue.slice(0, cookieValue.lastIndexOf('.')));
  }

  checkCsrf(cookieValue: string, presented: unknown): boolean {
    return typeof presented === 'string' && equal(presented, this.csrfToken(cookieValue));
  }

  /** Set-Cookie for a new session. */
  setCookie(value: string): string {
    return this.#cookie(value, Math.floor(SESSION_TTL_MS / 1000));
  }

  /** Set-Cookie that removes the session cookie. */
  clearCookie(): string {
    return this.#cookie('', 0);
  }

  #cookie(value: string, maxAge: number): string {
    return [
      `${SESSION_COOKIE}=${value}`,
      'Path=/',
      `Max-Age=${maxAge}`,
      'HttpOnly',
      'SameSite=Lax',
      ...(this.secure ? ['Secure'] : []),
    ].join('; ');
  }
}

/** One cookie's value from a Cookie header (the first one of that name). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    if (pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}
