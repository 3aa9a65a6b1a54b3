import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app/context.ts';
import { sessionCaller } from '../app/dashboard/session.ts';
import type { Forge } from '../app/ports.ts';
import { findRepository } from '../app/repositories.ts';
import { AppError } from '../domain/errors.ts';
import { isDashboardPage } from './pages.ts';
import { pathSegments, type RepoTarget, repoTargets } from './paths.ts';
import { CSS_HREF, type Form, safeNext, sendPage } from './respond.ts';
import { readCookie, SESSION_COOKIE, Sessions } from './session.ts';
import type { Viewer } from './views/layout.ts';
import { errorView, notFoundView } from './views/simple.ts';

/** A signed-in visitor: who they are to the views, the API caller they act as, and their cookie. */
export interface WebSession {
  readonly viewer: Viewer;
  readonly caller: Awaited<ReturnType<typeof sessionCaller>> & object;
  readonly cookie: string;
}

type Handler = (s: WebSession, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/** What every page module is given: the app, the forge, and the session and CSRF layer. */
export interface Web {
  readonly ctx: AppContext;
  readonly forge: Forge;
  readonly sessions: Sessions;
  /** The signed-in session, re-checked against the token row; a cookie that no longer stands is cleared. */
  sessionOf(request: FastifyRequest, reply: FastifyReply): Promise<WebSession | undefined>;
  /** Browsers send Origin with every form POST; one from another site is refused (with the CSRF token, defence in depth). */
  sameOrigin(request: FastifyRequest): boolean;
  /** A form posted by this session from this site: its Origin and its CSRF token. */
  formAllowed(s: WebSession, request: FastifyRequest, form: Form): boolean;
  toLogin(request: FastifyRequest, reply: FastifyReply): FastifyReply;
  notFound(reply: FastifyReply, s: WebSession | undefined): FastifyReply;
  forbidden(reply: FastifyReply, s: WebSession | undefined): FastifyReply;
  /** A signed-in page of one organization: others' and unknown ones are the same 404. */
  orgPage(handler: Handler): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** The first reading of the path whose repository exists in the caller's organization. */
  resolve(s: WebSession, segments: string[]): Promise<RepoTarget | undefined>;
}

/**
 * The dashboard's sessions and CSRF protection (docs/dashboard.md, Security): signed cookies checked
 * against the token row on every request, the Origin check and the per-session CSRF token of forms,
 * and the organization scope every page is served in.
 */
export function sessionPlugin(deps: { ctx: AppContext; forge: Forge }, secret: string): Web {
  const { ctx, forge } = deps;
  const sessions = new Sessions(secret, { secure: ctx.config.publicUrl.startsWith('https:') });
  const publicOrigin = new URL(ctx.config.publicUrl).origin;

  const sameOrigin = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    if (origin === undefined) return true;
    if (origin === publicOrigin) return true;
    try {
      return new URL(origin).host === request.headers.host;
    } catch {
      return false;
    }
  };

  const sessionOf = async (request: FastifyRequest, reply: FastifyReply): Promise<WebSession | undefined> => {
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (cookie === undefined || cookie === '') return undefined;
    const claims = sessions.verify(cookie, ctx.now());
    const caller = claims === undefined ? undefined : await sessionCaller(ctx, claims.tokenId);
    if (caller === undefined) {
      reply.header('set-cookie', sessions.clearCookie());
      return undefined;
    }
    const viewer = { orgSlug: caller.orgSlug, tokenName: caller.tokenName, csrf: sessions.csrfToken(cookie) };
    return { viewer, caller, cookie };
  };

  const toLogin = (request: FastifyRequest, reply: FastifyReply) => {
    // After signing in, come back to the page (a form post is not repeated: back to the start).
    const next = request.method === 'GET' ? safeNext(request.url) : undefined;
    return reply.redirect(next === undefined ? '/login' : `/login?next=${encodeURIComponent(next)}`, 303);
  };
  const notFound = (reply: FastifyReply, s: WebSession | undefined) =>
    sendPage(reply, 404, notFoundView({ viewer: s?.viewer, css: CSS_HREF }));
  const forbidden = (reply: FastifyReply, s: WebSession | undefined) =>
    sendPage(
      reply,
      403,
      errorView(
        { viewer: s?.viewer, css: CSS_HREF },
        'Form refused',
        'The form did not come from this site or it has expired. Reload the page and try again.',
      ),
    );

  const resolve = async (s: WebSession, segments: string[]): Promise<RepoTarget | undefined> => {
    for (const target of repoTargets(segments)) {
      try {
        await findRepository(ctx.db, s.caller, target.repo);
        return target;
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'REPO_NOT_FOUND')) throw error;
      }
    }
    return undefined;
  };

  const orgPage = (handler: Handler) => async (request: FastifyRequest, reply: FastifyReply) => {
    // A path that is no page (web/pages.ts) is the API's 404 envelope, never the sign-in.
    if (!isDashboardPage(request.method, request.url)) return reply.callNotFound();
    const s = await sessionOf(request, reply);
    if (s === undefined) return toLogin(request, reply);
    const segments = pathSegments(request.url);
    if (segments === undefined || segments[0]?.toLowerCase() !== s.caller.orgSlug) return notFound(reply, s);
    return handler(s, request, reply);
  };

  return {
    ctx,
    forge,
    sessions,
    sessionOf,
    sameOrigin,
    formAllowed: (s, request, form) => sameOrigin(request) && sessions.checkCsrf(s.cookie, form['_csrf']),
    toLogin,
    notFound,
    forbidden,
    orgPage,
    resolve,
  };
}
