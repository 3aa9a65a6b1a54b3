import type { FastifyInstance } from 'fastify';
import { signIn } from '../../app/dashboard/session.ts';
import { AppError } from '../../domain/errors.ts';
import { CSS, CSS_ETAG, CSS_HREF, type Form, safeNext, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { loginView } from '../views/simple.ts';

/** `/` (to the overview or the sign-in), `/login`, `/logout` and the stylesheet. */
export function registerSignIn(web: FastifyInstance, w: Web, hide: object): void {
  const { ctx, sessions } = w;
  web.get('/assets/app.css', hide, async (request, reply) => {
    reply.headers({
      'content-type': 'text/css; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
      etag: CSS_ETAG,
      'x-content-type-options': 'nosniff',
    });
    if (request.headers['if-none-match'] === CSS_ETAG) return reply.status(304).send();
    return reply.send(CSS);
  });

  web.get('/', hide, async (request, reply) => {
    const s = await w.sessionOf(request, reply);
    return reply.redirect(s === undefined ? '/login' : `/${encodeURIComponent(s.caller.orgSlug)}`, 302);
  });

  web.get('/login', hide, async (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>)['next']);
    const s = await w.sessionOf(request, reply);
    if (s !== undefined) return reply.redirect(next ?? `/${encodeURIComponent(s.caller.orgSlug)}`, 303);
    return sendPage(reply, 200, loginView(CSS_HREF, { next, error: undefined }));
  });

  web.post('/login', hide, async (request, reply) => {
    if (!w.sameOrigin(request)) return w.forbidden(reply, undefined);
    const form = (request.body ?? {}) as Form;
    const next = safeNext(form['next']);
    // Every attempt, good or bad, counts against the address's budget before any token is looked up.
    const retryAfter = ctx.authThrottle?.signIn(request.ip, ctx.now());
    if (retryAfter !== undefined) {
      reply.header('retry-after', String(retryAfter));
      const error = `Too many sign-in attempts from this address; try again in ${retryAfter} seconds.`;
      return sendPage(reply, 429, loginView(CSS_HREF, { next, error }));
    }
    const token = text(form['token'], 500);
    if (token === '') {
      return sendPage(reply, 400, loginView(CSS_HREF, { next, error: 'Enter an API token.' }));
    }
    let caller: Awaited<ReturnType<typeof signIn>>;
    try {
      caller = await signIn(ctx, token);
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'INVALID_TOKEN')) throw error;
      return sendPage(
        reply,
        401,
        loginView(CSS_HREF, { next, error: 'This token is not valid: it is unknown or revoked.' }),
      );
    }
    const cookie = sessions.issue(caller.tokenId, ctx.now());
    reply.header('set-cookie', sessions.setCookie(cookie));
    return reply.redirect(next ?? `/${encodeURIComponent(caller.orgSlug)}`, 303);
  });

  web.post('/logout', hide, async (request, reply) => {
    if (!w.sameOrigin(request)) return w.forbidden(reply, undefined);
    const s = await w.sessionOf(request, reply);
    if (s !== undefined && !sessions.checkCsrf(s.cookie, ((request.body ?? {}) as Form)['_csrf'])) {
      return w.forbidden(reply, s);
    }
    reply.header('set-cookie', sessions.clearCookie());
    return reply.redirect('/login', 303);
  });
}
