import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.ts';
import type { RouteDeps } from '../http/types.ts';
import { registerLinkedTest } from './pages/linked-test.ts';
import { registerOverview } from './pages/overview.ts';
import { registerRepoPages } from './pages/repos.ts';
import { registerSignIn } from './pages/sign-in.ts';
import { registerWebhooks } from './pages/webhooks.ts';
import { isDashboardPage } from './pages.ts';
import { CSS_HREF, sendPage } from './respond.ts';
import { sessionPlugin } from './session-plugin.ts';
import { errorView } from './views/simple.ts';

/**
 * The web dashboard: server-rendered pages at the html_url links of the API, signed in with an API
 * token (docs/dashboard.md). Everything is registered in its own scope: form bodies, HTML errors and
 * the session layer (session-plugin.ts) stay here; each page is in its own file under pages/.
 */
export async function registerDashboard(
  app: FastifyInstance,
  deps: RouteDeps,
  secret: string,
): Promise<void> {
  const w = sessionPlugin(deps, secret);

  await app.register(async (web) => {
    web.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(String(body))));
      },
    );
    web.setErrorHandler(async (error, request, reply) => {
      const s = await w.sessionOf(request, reply).catch(() => undefined);
      if (error instanceof AppError && error.status === 404) return w.notFound(reply, s);
      if (error instanceof AppError && error.status < 500) {
        return sendPage(
          reply,
          error.status,
          errorView({ viewer: s?.viewer, css: CSS_HREF }, 'Request refused', error.message),
        );
      }
      const status = (error as { statusCode?: number }).statusCode;
      if (typeof status === 'number' && status >= 400 && status < 500) {
        return sendPage(
          reply,
          status,
          errorView(
            { viewer: s?.viewer, css: CSS_HREF },
            'Request refused',
            'The request could not be read.',
          ),
        );
      }
      request.log.error({ err: error }, 'dashboard page failed');
      return sendPage(
        reply,
        500,
        errorView(
          { viewer: s?.viewer, css: CSS_HREF },
          'Something went wrong',
          `The page could not be shown; quote request id ${request.id} when reporting it.`,
        ),
      );
    });

    const hide = { schema: { hide: true } };
    // Their patterns match more paths than are pages: the 404 handler's 405 check asks the same rule.
    const page = { ...hide, config: { servesPath: isDashboardPage } };
    registerSignIn(web, w, hide);
    registerOverview(web, w, page);
    registerWebhooks(web, w, page);
    registerLinkedTest(web, w, page);
    registerRepoPages(web, w, page);
  });
}
