import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Caller } from '../../app/context.ts';
import { authenticate } from '../../app/tokens.ts';
import { AppError } from '../../domain/errors.ts';
import type { RateLimiter } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every authenticated route. */
    caller?: Caller;
  }
}

function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-token'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.trim() !== '') return value.trim();
  const authorization = request.headers.authorization;
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  return bearer?.[1];
}

/**
 * An onRequest hook: runs before the body is read, so unauthenticated callers cost no parsing.
 * Accepts `x-api-token` (Trunk v1) and `Authorization: Bearer` (Trunk v2), then applies the rate limit.
 * Before the token is looked up, the client address's budget of failed authentications is checked
 * (AuthThrottle): an address that keeps presenting bad tokens gets 429 without a database lookup.
 */
export function authHook(ctx: AppContext, limiter: RateLimiter) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const token = presentedToken(request);
    if (token === undefined) {
      throw new AppError('AUTHENTICATION_REQUIRED', 'Missing API token: send it in the x-api-token header');
    }
    const admission = ctx.authThrottle?.admit(request.ip, token, ctx.now());
    let caller: Caller;
    try {
      caller = await authenticate(ctx.db, token, ctx.now());
    } catch (error) {
      if (error instanceof AppError && error.code === 'INVALID_TOKEN') admission?.failed();
      else admission?.abandoned();
      throw error;
    }
    admission?.succeeded();
    request.caller = caller;
    if (limiter.enabled) reply.headers(limiter.take(caller.tokenId, ctx.now()));
  };
}

/** The authenticated caller of a request; only valid on routes behind authHook. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.caller === undefined) throw new Error('route is not behind the auth hook');
  return request.caller;
}
