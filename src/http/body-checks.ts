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
// deep-frozen, without parsing it again. The parser reads the body's chunks itself (with the checks of
// Fastify's own reading) and compares them with the kept body's bytes in place, so a repeated body is
// neither joined into one buffer nor decoded into a string (a 160 KB buffer and a 160 KB string a
// request; the decoding alone was an eighth of the route's CPU time). Schema validation still runs on
// the value (its success remembered for a kept one: keptBodyValidator), and only the parse is kept,
// never an answer (at most MAINLINE_KEPT_BODY_CHARS bytes in all).
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { errorCodes } from 'fastify';
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
const KEPT_BODY_MIN_BYTES = 16 * 1024;

/** Freezes a parsed JSON value and everything in it: a kept body shared by requests cannot be changed. */
function deepFreeze(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** A kept body: its exact bytes and the value parsed from them. */
interface KeptBody {
  readonly bytes: Buffer;
  readonly value: unknown;
}

/**
 * Parsed clean bodies, each for the organization that sent it (app/caches.ts, weighed by bytes), by
 * organization, length and a sample of the bytes; `value` is a KeptBody. Same bytes, same parse: the
 * value is the one a new parse would make.
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

/** Bytes sampled across a body for its key: bodies of one organization and length rarely share them. */
const SAMPLES = 64;

/** The key of a body of `length` bytes in `chunks`: organization, length and SAMPLES bytes spread over it. */
function keyOf(orgId: string, chunks: readonly Buffer[], length: number): string {
  let key = `${orgId}\n${length}\n`;
  let chunk = 0;
  let start = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const at = Math.floor((i * length) / SAMPLES);
    while (at >= start + (chunks[chunk] as Buffer).length) start += (chunks[chunk++] as Buffer).length;
    key += String.fromCharCode((chunks[chunk] as Buffer)[at - start] as number);
  }
  return key;
}

/** True when the chunks hold exactly `bytes`, compared in place. */
function sameBytes(chunks: readonly Buffer[], bytes: Buffer): boolean {
  let at = 0;
  for (const chunk of chunks) {
    if (at + chunk.length > bytes.length) return false;
    if (bytes.compare(chunk, 0, chunk.length, at, at + chunk.length) !== 0) return false;
    at += chunk.length;
  }
  return at === bytes.length;
}

type Done = (error: Error | null, value?: unknown) => void;

/**
 * Reads a request's body as Fastify's own reading does (the route's body limit; a Content-Length that
 * matches what arrived; a stream error answered 400), handing over its chunks as they came.
 */
function readChunks(
  request: FastifyRequest,
  limit: number,
  payload: NodeJS.ReadableStream & { receivedEncodedLength?: number },
  done: Done,
  then: (chunks: Buffer[], length: number) => void,
): void {
  const contentLength = Number(request.headers['content-length']);
  if (contentLength > limit) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  const stop = () => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onEnd);
  };
  function onData(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    received += bytes.length;
    if (received > limit || (payload.receivedEncodedLength ?? 0) > limit) {
      stop();
      done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
      return;
    }
    chunks.push(bytes);
  }
  function onEnd(error?: Error & { statusCode?: number }): void {
    stop();
    if (error != null) {
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
      done(error, undefined);
      return;
    }
    if (!Number.isNaN(contentLength) && (payload.receivedEncodedLength || received) !== contentLength) {
      done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH(), undefined);
      return;
    }
    then(chunks, received);
  }
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onEnd);
  payload.resume();
}

/**
 * Replaces Fastify's JSON parser with the same parser (the same errors for an empty, malformed or
 * prototype-poisoning body) that also marks a clean body and answers a kept one, and adds the
 * preValidation hook of the checks. Called on the root instance before any route is registered, so
 * every plugin inherits both.
 */
export function registerBodyChecks(app: FastifyInstance, kept: ParsedBodies): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.decorateRequest('bodyClean', false);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const route = request.routeOptions;
    readChunks(request, route.bodyLimit, payload, done, (chunks, length) => {
      // Only for an authenticated caller (the auth hook ran before the body was read).
      const orgId = request.caller?.orgId;
      const key =
        orgId !== undefined && length >= KEPT_BODY_MIN_BYTES && route.config.keepParsedBody === true
          ? keyOf(orgId, chunks, length)
          : undefined;
      if (key !== undefined) {
        const held = kept.get(key);
        const body = held?.value as KeptBody | undefined;
        if (held?.orgId === orgId && body !== undefined && sameBytes(chunks, body.bytes)) {
          request.bodyClean = true;
          done(null, body.value);
          return;
        }
      }
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length);
      const text = bytes.toString('utf8');
      parseJson(request, text, (error: Error | null, value?: unknown) => {
        if (error === null) {
          request.bodyClean = !SUSPECT_ESCAPE.test(text);
          if (key !== undefined && orgId !== undefined && request.bodyClean) {
            // Its own copy: a lone chunk may share memory with a buffer that is used again.
            const own = chunks.length === 1 ? Buffer.from(bytes) : bytes;
            kept.set(
              key,
              { orgId, value: { bytes: own, value: deepFreeze(value) } satisfies KeptBody },
              length,
            );
          }
        }
        done(error, value);
      });
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

/**
 * A route's validator compiler (Fastify's, wrapped) that remembers which kept bodies (frozen values)
 * passed its body check: the same value gives the same result, and a 1,000-identifier body was
 * checked anew on every request. A body that fails is checked each time.
 */
export function keptBodyValidator<S>(compile: FastifySchemaCompiler<S>): FastifySchemaCompiler<S> {
  return (route) => {
    const check = compile(route);
    if (route.httpPart !== 'body') return check;
    const passed = new WeakSet<object>();
    return (value: unknown) => {
      const frozen = value !== null && typeof value === 'object' && Object.isFrozen(value);
      if (frozen && passed.has(value)) return { value };
      const result = check(value);
      if (
        frozen &&
        typeof result === 'object' &&
        'value' in result &&
        result.value === value &&
        !result.error
      )
        passed.add(value);
      return result;
    };
  };
}
