import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Caller } from '../../app/context.ts';
import type { Admission } from '../../app/throttle.ts';
import { authenticate, hashToken } from '../../app/tokens.ts';
import { AppError } from '../../domain/errors.ts';
import { parseRunId } from '../../domain/fork-run.ts';
import type { RateLimiter } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every authenticated route. */
    caller?: Caller;
    /**
     * Set instead of `caller` on a route that takes a fork's run (config.forkRunAuth) when the request
     * has no token but an x-forked-workflow-run-id: the route verifies it (forkRunCallerOf).
     */
    forkRun?: { readonly runId: number; readonly admission: Admission | undefined };
  }
  interface FastifyContextConfig {
    /** The route accepts x-forked-workflow-run-id instead of a token (setImpactedTargets only). */
    forkRunAuth?: boolean;
  }
}

const FORK_RUN_HEADER = 'x-forked-workflow-run-id';

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
  const lookUp = async (request: FastifyRequest, token: string, hash: string): Promise<Caller> => {
    const generation = ctx.caches.tokens.generation;
    const admission = ctx.authThrottle?.admit(request.ip, token, ctx.now());
    let caller: Caller;
    try {
      const found = await authenticate(ctx.db, token, ctx.now(), hash);
      caller = { ...found, repositories: ctx.caches.repositories };
    } catch (error) {
      if (error instanceof AppError && error.code === 'INVALID_TOKEN') admission?.failed();
      else admission?.abandoned();
      throw error;
    }
    admission?.succeeded();
    ctx.caches.tokens.set(hash, caller, ctx.now(), generation);
    return caller;
  };
  const admit = (request: FastifyRequest, reply: FastifyReply, caller: Caller): void => {
    request.caller = caller;
    if (limiter.enabled) reply.headers(limiter.take(caller.tokenId, ctx.now()));
  };
  // A callback hook, so that a token answered by the cache costs no promise; what it throws is the
  // request's error, as from an async hook.
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    const token = presentedToken(request);
    if (token === undefined) {
      const header = request.headers[FORK_RUN_HEADER];
      const forkRun = (Array.isArray(header) ? header[0] : header)?.trim();
      if (forkRun === undefined || forkRun === '') {
        throw new AppError('AUTHENTICATION_REQUIRED', 'Missing API token: send it in the x-api-token header');
      }
      // A fork's run stands in for a token on one route only, and only once the route has verified it.
      if (request.routeOptions.config.forkRunAuth !== true) {
        throw new AppError(
          'AUTHENTICATION_REQUIRED',
          `Missing API token: send it in the x-api-token header (${FORK_RUN_HEADER} is accepted instead only by setImpactedTargets)`,
        );
      }
      const runId = parseRunId(forkRun);
      if (runId === undefined) {
        ctx.authThrottle?.fail(request.ip, ctx.now());
        throw new AppError(
          'INVALID_TOKEN',
          `${FORK_RUN_HEADER} must be the id of a GitHub Actions run (github.run_id, a whole number)`,
        );
      }
      // Counted as a failed authentication until the route's verification succeeds: each one asks GitHub.
      const admission = ctx.authThrottle?.admit(request.ip, `${FORK_RUN_HEADER}:${runId}`, ctx.now());
      request.forkRun = { runId, admission };
      if (limiter.enabled) reply.headers(limiter.take(`${FORK_RUN_HEADER}:${runId}`, ctx.now()));
      done();
      return;
    }
    const hash = hashToken(token);
    // A token that authenticated moments ago is trusted without the database (and, being valid, is
    // not counted against the address either); docs/security.md bounds how long a revoked one lasts.
    const cached = ctx.caches.tokens.get(hash, ctx.now());
    if (cached !== undefined) {
      admit(request, reply, cached);
      done();
      return;
    }
    lookUp(request, token, hash).then(
      (caller) => {
        try {
          admit(request, reply, caller);
        } catch (error) {
          done(error as Error);
          return;
        }
        done();
      },
      (error: Error) => done(error),
    );
  };
}

/** The authenticated caller of a request; only valid on routes behind authHook. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.caller === undefined) throw new Error('route is not behind the auth hook');
  return request.caller;
}

/**
 * The caller of a route that takes a fork's run (config.forkRunAuth): the token's caller, else the one
 * `verify` makes of the x-forked-workflow-run-id (throwing 401 when it does not hold), for this request
 * only. A refused run counts as a failed authentication of the client's address.
 */
export async function forkRunCallerOf(
  request: FastifyRequest,
  verify: (runId: number) => Promise<Caller>,
): Promise<Caller> {
  if (request.caller !== undefined) return request.caller;
  const fork = request.forkRun;
  if (fork === undefined) throw new Error('route is not behind the auth hook');
  try {
    const caller = await verify(fork.runId);
    fork.admission?.succeeded();
    return caller;
  } catch (error) {
    if (error instanceof AppError && error.code === 'INVALID_TOKEN') fork.admission?.failed();
    else fork.admission?.abandoned();
    throw error;
  }
}
