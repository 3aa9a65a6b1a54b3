import type { IncomingHttpHeaders } from 'node:http';
import { ErrorEnvelope } from '../schemas/common.ts';
import type { Api } from '../types.ts';

// What the forges' webhook routes (github/webhook.ts, gitlab/webhook.ts) have in common: the body is
// kept as the bytes sent, since a signature or token is checked against them; headers are read as
// single strings; the same error answers.

/** Every body of the routes registered on `app` (their own scope) arrives as a Buffer, unparsed. */
export function acceptRawBodies(app: Api): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}

/** The request's bytes (empty when it had no body). */
export function rawBody(request: { readonly body: unknown }): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/** A header sent once; absent when missing or repeated. */
export function header(request: { readonly headers: IncomingHttpHeaders }, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The error answers of a webhook route. */
export const WEBHOOK_ERRORS = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  413: ErrorEnvelope,
  503: ErrorEnvelope,
} as const;
