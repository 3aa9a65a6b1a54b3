import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyReply } from 'fastify';

export const CSS = readFileSync(new URL('./assets/app.css', import.meta.url));
export const CSS_ETAG = `"${createHash('sha256').update(CSS).digest('base64url').slice(0, 16)}"`;
/** The stylesheet's URL; the version changes with its content, so it may be cached for long. */
export const CSS_HREF = `/assets/app.css?v=${CSS_ETAG.slice(1, 11)}`;

/**
 * What every dashboard page may load: its own stylesheet and inline SVG. No scripts (the queue page
 * alone runs its own reload script, allowed by hash: scriptCsp), no framing, forms only to this site.
 */
const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** The CSP of a page with one inline script of the code's own: that exact text, by its SHA-256, and nothing else. */
export function scriptCsp(script: string): string {
  return `${CSP}; script-src 'sha256-${createHash('sha256').update(script).digest('base64')}'`;
}

/** A posted form's fields. */
export type Form = Record<string, string | undefined>;

/** An HTML page with the dashboard's headers (docs/dashboard.md, Security: headers). */
export function sendPage(reply: FastifyReply, status: number, body: string, csp = CSP): FastifyReply {
  return reply
    .status(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
    })
    .send(body);
}

/** A path of this site to return to after signing in; anything else (other hosts, //x, /\x) is dropped. */
export function safeNext(next: unknown): string | undefined {
  if (typeof next !== 'string' || next.length > 2000) return undefined;
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(next) && !next.startsWith('/login') ? next : undefined;
}

/** A query or form value as trimmed text of at most `max` characters ('' when absent). */
export function text(v: unknown, max: number): string {
  return typeof v === 'string' ? v.trim().slice(0, max) : '';
}

/** A 1-based page number from a query value (1 when absent or not a positive number). */
export function pageNumber(v: unknown): number {
  const page = Number.parseInt(text(v, 9), 10);
  return Number.isFinite(page) && page > 0 ? page : 1;
}
