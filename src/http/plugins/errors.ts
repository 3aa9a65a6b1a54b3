import { randomUUID } from 'node:crypto';
import {
  STATUS_CODES as HTTP_REASONS,
  type IncomingMessage,
  maxHeaderSize,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../../domain/errors.ts';
import { type SchemaIssue, toDetails } from '../validation.ts';

/** Fastify's own error codes that are the client's fault, and what we answer instead. */
const FASTIFY_CODES: Record<string, (e: FastifyError, limit: number) => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (_e, limit) =>
    new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than the limit of ${limit} bytes`),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type: send the body as application/json'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    new AppError(
      'INVALID_JSON',
      'The body is empty but Content-Type is application/json: send a JSON object',
    ),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new AppError('BAD_REQUEST', 'Content-Length does not match the length of the body'),
  FST_ERR_CTP_INVALID_JSON_BODY: () =>
    new AppError('INVALID_JSON', 'The body is not valid JSON; send a JSON object'),
};

const STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'BAD_REQUEST',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'REQUEST_HEADERS_TOO_LARGE',
  429: 'RATE_LIMIT_EXCEEDED',
  503: 'SERVICE_UNAVAILABLE',
};

function validationError(error: FastifyError): AppError {
  const part = (error as { validationContext?: string }).validationContext ?? 'body';
  const details = toDetails((error.validation ?? []) as unknown as SchemaIssue[], part);
  const whole = details.find((d) => d.path === '$');
  if (whole !== undefined) {
    return new AppError('VALIDATION_FAILED', 'The request body must be a JSON object', { details: [whole] });
  }
  const shown = details.slice(0, 3).map((d) => d.message);
  const more = details.length > 3 ? ` (and ${details.length - 3} more)` : '';
  return new AppError('VALIDATION_FAILED', `Invalid request: ${shown.join('; ')}${more}`, { details });
}

/** Maps anything thrown to the one error envelope. Unknown errors become a 500 with no internals. */
export function toAppError(error: unknown, bodyLimit: number): AppError | undefined {
  if (error instanceof AppError) return error;
  const e = error as FastifyError;
  if (e.validation !== undefined) return validationError(e);
  const byCode = e.code !== undefined ? FASTIFY_CODES[e.code] : undefined;
  if (byCode !== undefined) return byCode(e, bodyLimit);
  if (e instanceof SyntaxError && e.statusCode === 400) {
    return new AppError('INVALID_JSON', `The body is not valid JSON: ${e.message}`);
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  const code = STATUS_CODES[status];
  if (status >= 400 && status < 500 && code !== undefined) return new AppError(code, e.message);
  return undefined;
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers !== undefined) reply.headers(error.headers);
  const body = {
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
  };
  return reply.status(error.status).type('application/json; charset=utf-8').send(body);
}

export function registerErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toAppError(error, bodyLimit);
    if (mapped !== undefined) {
      if (mapped.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendError(reply, mapped);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(
      reply,
      new AppError(
        'INTERNAL_ERROR',
        `Internal server error; quote request id ${request.id} when reporting it`,
      ),
    );
  });
  const routes = new RouteMethods();
  app.addHook('onRoute', (route) =>
    routes.add(route.method, route.url ?? route.path, route.config?.servesPath),
  );
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = routes.methodsOf(path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(
        reply,
        new AppError(
          'METHOD_NOT_ALLOWED',
          `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')} (see /docs for the API)`,
        ),
      );
    }
    return sendError(
      reply,
      new AppError('ROUTE_NOT_FOUND', `No route ${request.method} ${path}; see /docs for the API`),
    );
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * For a route whose pattern matches more than it serves (the dashboard's `/:org` matches every
     * one-segment path): whether it serves this method and path. A route that answers a path it does
     * not serve with `reply.callNotFound()` names it here, so that the path is not offered in a 405's
     * `Allow` either. Unset: every path the pattern matches.
     */
    servesPath?: (method: string, path: string) => boolean;
  }
}

type Serves = ((method: string, path: string) => boolean) | undefined;

/**
 * The methods each registered path answers, so a known path asked with another method gets 405 with
 * `Allow` instead of a 404 that suggests the path is wrong. Patterns are matched segment by segment
 * (`:param` one segment, `*` the rest), as the router does, then by the route's `servesPath`.
 */
class RouteMethods {
  readonly #patterns = new Map<string, { regex: RegExp; methods: Map<string, Serves> }>();

  add(method: string | string[], url: string, serves?: Serves): void {
    let entry = this.#patterns.get(url);
    if (entry === undefined) {
      const source = url
        .split('/')
        .map((segment) =>
          segment === '*'
            ? '.*'
            : segment.includes(':')
              ? '[^/]+'
              : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('/');
      entry = { regex: new RegExp(`^${source}$`), methods: new Map() };
      this.#patterns.set(url, entry);
    }
    for (const m of Array.isArray(method) ? method : [method]) entry.methods.set(m.toUpperCase(), serves);
  }

  methodsOf(path: string): string[] {
    const methods = new Set<string>();
    for (const { regex, methods: these } of this.#patterns.values()) {
      if (!regex.test(path)) continue;
      for (const [m, serves] of these) if (serves === undefined || serves(m, path)) methods.add(m);
    }
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }
}

/**
 * Request ids kept on the raw request, so an error Node raises mid-request is answered with the
 * request's own id; a symbol-keyed property costs less per request than an entry in a WeakMap.
 */
const REQUEST_ID = Symbol('mainline.requestId');

export function rememberRequestId(req: IncomingMessage, id: string): string {
  (req as IncomingMessage & { [REQUEST_ID]?: string })[REQUEST_ID] = id;
  return id;
}

/** What Node's HTTP parser and timers raise before (or instead of) Fastify, as the envelope's code and message. */
function clientErrorOf(
  error: Error & { code?: string; reason?: string },
  requestTimeoutSeconds: number,
): AppError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new AppError(
      'REQUEST_HEADERS_TOO_LARGE',
      `The request's headers are larger than the ${maxHeaderSize} bytes the server reads; send fewer or shorter headers`,
    );
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new AppError(
      'REQUEST_TIMEOUT',
      `The request was not received in full within ${requestTimeoutSeconds} s (MAINLINE_REQUEST_TIMEOUT); send it again`,
    );
  }
  const reason = typeof error.reason === 'string' ? error.reason.replace(/[^\x20-\x7e]/g, '') : 'malformed';
  return new AppError(
    'BAD_REQUEST',
    `The request is not valid HTTP/1.1 (${reason}); check the request line (METHOD /path HTTP/1.1) and the headers`,
  );
}

/**
 * Fastify's clientErrorHandler: errors Node raises before a request reaches Fastify (headers too
 * large, a malformed request line, the request timeout) get the same JSON envelope and x-request-id as
 * every other error, as a complete HTTP response on the raw socket, which is then closed.
 */
export function clientErrorHandler(requestTimeoutSeconds: number) {
  return function (this: { log: FastifyBaseLogger }, error: Error & { code?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
    // Once a response has started on this socket, anything written now would corrupt it.
    if (!socket.writable || inFlight?.headersSent === true) {
      socket.destroy(error);
      return;
    }
    const id =
      (inFlight?.req !== undefined
        ? (inFlight.req as IncomingMessage & { [REQUEST_ID]?: string })[REQUEST_ID]
        : undefined) ?? randomUUID();
    const answer = clientErrorOf(error, requestTimeoutSeconds);
    this.log.info({ reqId: id, code: error.code, status: answer.status }, 'client error');
    const body = JSON.stringify({ error: { code: answer.code, message: answer.message } });
    socket.end(
      [
        `HTTP/1.1 ${answer.status} ${HTTP_REASONS[answer.status] ?? 'Error'}`,
        'content-type: application/json; charset=utf-8',
        `content-length: ${Buffer.byteLength(body)}`,
        `x-request-id: ${id}`,
        'connection: close',
        '',
        body,
      ].join('\r\n'),
      () => socket.destroy(),
    );
  };
}
