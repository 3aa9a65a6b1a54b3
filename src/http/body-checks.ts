// The checks every request's strings pass before schema validation: no NUL character anywhere (body,
// query, params; 400 naming the field), and unpaired surrogates replaced by U+FFFD (validation.ts).
// A JSON body is read as text first, and in JSON text either can only come from a `\u` escape: a NUL
// from `\u0000` (a raw control character inside a string is not valid JSON), an unpaired surrogate from
// `\uD800`–`\uDFFF` (raw bytes of one decode to U+FFFD already). A body whose text has neither escape
// is marked clean by its parser and not walked again: a 160 KB getQuarantineConfig body of 1,000 test
// identifiers cost two walks of every string per request. Any other body (an escape found, even
// inside an escaped backslash; a form; a stream) is walked as before, so the answers do not change.
// A route with `config.keepParsedBody` (getQuarantineConfig: the CLI sends the same test ids run after
// run) also gets a large clean body its caller's organization sent before as the value parsed then,
// deep-frozen, without parsing it again; schema validation still runs on it, and only the parse is
// kept, never an answer (at most MAINLINE_KEPT_BODY_CHARS characters in all).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WeighedLru } from '../lib/weighed-lru.ts';
import { findNul, nulError, wellFormedStrings } from './validation.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the JSON parser: the body's text holds no escape that could make a NUL or a lone surrogate. */
    bodyClean: boolean;
  }
  interface FastifyContextConfig {
    /** Large clean JSON bodies are kept parsed (ParsedBodies): the route must not change its body. */
    keepParsedBody?: boolean;
  }
}

/** Bodies shorter than this are parsed every time: parsing them costs less than keeping them. */
const KEPT_BODY_MIN_CHARS = 16 * 1024;

/** Freezes a parsed JSON value and everything in it: a kept body shared by requests cannot be changed. */
function deepFreeze(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Parsed clean bodies by their exact text, each for the organization that sent it (app/caches.ts,
 * weighed by characters). Same text, same parse: the value is the one a new parse would make.
 */
export type ParsedBodies = WeighedLru<{ readonly orgId: string; readonly value: unknown }>;

/** A `\u` escape of NUL or of a surrogate, in any case the JSON grammar allows for its hex digits. */
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

function isStream(value: unknown): boolean {
  return Buffer.isBuffer(value) || typeof (value as { pipe?: unknown } | null)?.pipe === 'function';
}

/** True when an object (query, params) has no own property: nothing to walk. */
function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  for (const _ in value) return false;
  return true;
}

/** The NUL check and surrogate repair of one part of a request; the error to answer, if any. */
function checkPart(
  request: FastifyRequest,
  part: '$' | 'query' | 'params',
  value: unknown,
): Error | undefined {
  if (value === undefined || isEmptyObject(value) || isStream(value)) return undefined;
  const nul = findNul(value, part);
  if (nul !== undefined) return nulError(nul);
  // Objects are changed in place; only a body that is a string itself is replaced.
  const wellFormed = wellFormedStrings(value);
  if (part === '$') request.body = wellFormed;
  return undefined;
}

/**
 * Replaces Fastify's JSON parser with the same parser (the same errors for an empty, malformed or
 * prototype-poisoning body) that also marks a clean body, and adds the preValidation hook of the checks.
 * Called on the root instance before any route is registered, so every plugin inherits both.
 */
export function registerBodyChecks(app: FastifyInstance, kept: ParsedBodies): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.decorateRequest('bodyClean', false);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    // Only for an authenticated caller (the auth hook ran before the body was read).
    const orgId = request.caller?.orgId;
    const keep =
      orgId !== undefined &&
      text.length >= KEPT_BODY_MIN_CHARS &&
      request.routeOptions.config.keepParsedBody === true;
    if (keep) {
      const held = kept.get(text);
      if (held !== undefined && held.orgId === orgId) {
        request.bodyClean = true;
        done(null, held.value);
        return;
      }
    }
    parseJson(request, text, (error: Error | null, value?: unknown) => {
      if (error === null) {
        request.bodyClean = !SUSPECT_ESCAPE.test(text);
        if (keep && request.bodyClean) kept.set(text, { orgId, value: deepFreeze(value) }, text.length);
      }
      done(error, value);
    });
  });
  // A callback hook: one microtask less per request than an async one.
  app.addHook('preValidation', (request, _reply, done) => {
    const error =
      (request.bodyClean ? undefined : checkPart(request, '$', request.body)) ??
      checkPart(request, 'query', request.query) ??
      checkPart(request, 'params', request.params);
    if (error !== undefined) done(error);
    else done();
  });
}
