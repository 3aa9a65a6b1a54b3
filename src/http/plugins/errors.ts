import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
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
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new AppError(
        'ROUTE_NOT_FOUND',
        `No route ${request.method} ${request.url.split('?')[0]}; see /docs for the API`,
      ),
    ),
  );
}
