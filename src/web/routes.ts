import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AllTestsQuery, allTestsPage } from '../app/dashboard/all-tests.ts';
import { FAILING_WINDOWS, type FailingQuery, failingTestsPage } from '../app/dashboard/failing.ts';
import { organizationOverview } from '../app/dashboard/overview.ts';
import { isOnGitHub, prPage, pullPage, queuePage, runPage } from '../app/dashboard/queues.ts';
import { sessionCaller, signIn } from '../app/dashboard/session.ts';
import { findLinkedTest, type ListQuery, testPage, unhealthyTestsPage } from '../app/dashboard/tests.ts';
import {
  flagTest,
  getSettings,
  type OverrideSetting,
  overrideQuarantine,
  updateSettings,
} from '../app/health/manage.ts';
import { getQueue, updateQueue } from '../app/queue/queues.ts';
import { findRepository } from '../app/repositories.ts';
import { createWebhook, deleteWebhook, listWebhooks } from '../app/webhooks-out/endpoints.ts';
import { AppError } from '../domain/errors.ts';
import type { RouteDeps } from '../http/types.ts';
import { isDashboardPage } from './pages.ts';
import { pathSegments, paths, type RepoTarget, repoTargets } from './paths.ts';
import { QUEUE_CHOICES, queueFieldOf, queueFormValues, queuePatchFromForm } from './queue-settings-form.ts';
import { readCookie, SESSION_COOKIE, Sessions } from './session.ts';
import {
  ADD_ACTIONS,
  addFieldOf,
  addMonitorPatch,
  fieldOf,
  formValues,
  type MonitorKind,
  newMonitorValues,
  newPrefix as newPrefixOf,
  patchFromForm,
} from './settings-form.ts';
import { allTestsView } from './views/all-tests.ts';
import { failingView } from './views/failing.ts';
import type { Viewer } from './views/layout.ts';
import { overviewView } from './views/overview.ts';
import { prView, pullView, QUEUE_REFRESH_SCRIPT, queueView, runView } from './views/queue.ts';
import { queueSettingsView } from './views/queue-settings.ts';
import { repoView } from './views/repo.ts';
import { settingsView } from './views/settings.ts';
import { errorView, loginView, notFoundView } from './views/simple.ts';
import { testView } from './views/test.ts';
import { webhooksView } from './views/webhooks.ts';
import { webhookFromForm } from './webhooks-form.ts';

const CSS = readFileSync(new URL('./assets/app.css', import.meta.url));
const CSS_ETAG = `"${createHash('sha256').update(CSS).digest('base64url').slice(0, 16)}"`;
/** The stylesheet's URL; the version changes with its content, so it may be cached for long. */
const CSS_HREF = `/assets/app.css?v=${CSS_ETAG.slice(1, 11)}`;

/**
 * What every dashboard page may load: its own stylesheet and inline SVG. No scripts (the queue page
 * alone runs its own reload script, allowed by hash: QUEUE_CSP), no framing, forms only to this site.
 */
const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** The CSP of a page with one inline script of the code's own: that exact text, by its SHA-256, and nothing else. */
function scriptCsp(script: string): string {
  return `${CSP}; script-src 'sha256-${createHash('sha256').update(script).digest('base64')}'`;
}
const QUEUE_CSP = scriptCsp(QUEUE_REFRESH_SCRIPT);

const OVERRIDES = new Set<OverrideSetting>(['AUTO', 'ALWAYS_QUARANTINE', 'NEVER_QUARANTINE']);
const SHOWS = new Set(['unhealthy', 'flaky', 'broken', 'quarantined']);
const SORTS = new Set(['prs', 'name', 'changed']);

interface WebSession {
  readonly viewer: Viewer;
  readonly caller: Awaited<ReturnType<typeof sessionCaller>> & object;
  readonly cookie: string;
}

type Form = Record<string, string | undefined>;

function sendPage(reply: FastifyReply, status: number, body: string, csp = CSP): FastifyReply {
  return reply
    .status(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
    })
    .send(body);
}

/** A path of this site to return to after signing in; anything else (other hosts, //x, /\x) is dropped. */
function safeNext(next: unknown): string | undefined {
  if (typeof next !== 'string' || next.length > 2000) return undefined;
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(next) && !next.startsWith('/login') ? next : undefined;
}

function text(v: unknown, max: number): string {
  return typeof v === 'string' ? v.trim().slice(0, max) : '';
}

function listQuery(query: unknown): ListQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  const show = text(q['show'], 20);
  const sort = text(q['sort'], 20);
  const page = Number.parseInt(text(q['page'], 9), 10);
  return {
    show: (SHOWS.has(show) ? show : 'unhealthy') as ListQuery['show'],
    search: text(q['q'], 200),
    owner: text(q['owner'], 200),
    sort: (SORTS.has(sort) ? sort : 'prs') as ListQuery['sort'],
    page: Number.isFinite(page) && page > 0 ? page : 1,
  };
}

function failingQuery(query: unknown): FailingQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  const window = text(q['window'], 10);
  const page = Number.parseInt(text(q['page'], 9), 10);
  return {
    window: window in FAILING_WINDOWS ? (window as FailingQuery['window']) : '24h',
    page: Number.isFinite(page) && page > 0 ? page : 1,
  };
}

function allTestsQuery(query: unknown): AllTestsQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  const page = Number.parseInt(text(q['page'], 9), 10);
  return {
    search: text(q['q'], 200),
    owner: text(q['owner'], 200),
    file: text(q['file'], 500),
    page: Number.isFinite(page) && page > 0 ? page : 1,
  };
}

/**
 * The web dashboard: server-rendered pages at the html_url links of the API, signed in with an API
 * token (docs/dashboard.md). Everything is registered in its own scope: form bodies, HTML errors
 * and the session stay here.
 */
export async function registerDashboard(
  app: FastifyInstance,
  deps: RouteDeps,
  secret: string,
): Promise<void> {
  const { ctx, forge } = deps;
  const sessions = new Sessions(secret, { secure: ctx.config.publicUrl.startsWith('https:') });
  const publicOrigin = new URL(ctx.config.publicUrl).origin;

  /** Browsers send Origin with every form POST; one from another site is refused (with the CSRF token, defence in depth). */
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

  /** The signed-in session, re-checked against the token row; a cookie that no longer stands is cleared. */
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

  /** The first reading of the path whose repository exists in the caller's organization. */
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

  /** A signed-in page of one organization: others' and unknown ones are the same 404. */
  const orgPage =
    (handler: (s: WebSession, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      // A path that is no page (web/pages.ts) is the API's 404 envelope, never the sign-in.
      if (!isDashboardPage(request.method, request.url)) return reply.callNotFound();
      const s = await sessionOf(request, reply);
      if (s === undefined) return toLogin(request, reply);
      const segments = pathSegments(request.url);
      if (segments === undefined || segments[0]?.toLowerCase() !== s.caller.orgSlug)
        return notFound(reply, s);
      return handler(s, request, reply);
    };

  /**
   * The settings form posted: the API's schema, then the API's use case (updateSettings: the same
   * policy checks, re-evaluation and history). Refused values come back beside their fields, 400.
   */
  const saveSettingsForm = async (
    s: WebSession,
    repo: RepoTarget['repo'],
    form: Form,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const scope = { repo, org_url_slug: s.caller.orgSlug };
    const { settings } = await getSettings(ctx, s.caller, scope);
    const action = form['_action'] ?? 'save';
    const adding: MonitorKind | undefined = ADD_ACTIONS[action as keyof typeof ADD_ACTIONS];
    try {
      const patch =
        adding === undefined ? patchFromForm(settings, form) : addMonitorPatch(settings, adding, form);
      await updateSettings(ctx, s.caller, { ...scope, settings: patch });
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'VALIDATION_FAILED')) throw error;
      const values = { ...formValues(settings), ...newMonitorValues() };
      // Only the form that was posted comes back as typed; the other keeps its values.
      for (const key of Object.keys(values)) {
        const posted =
          adding === undefined ? !key.startsWith('new_') : key.startsWith(`${newPrefixOf(adding)}.`);
        if (posted) values[key] = form[key] ?? '';
      }
      const errors = new Map<string, string[]>();
      const details = error.details ?? [{ path: '', expected: '', message: error.message }];
      for (const d of details) {
        const field =
          adding === undefined ? fieldOf(d) : addFieldOf(d, adding, settings.monitors[adding].length);
        const key = field in values ? field : adding === undefined ? '' : `${newPrefixOf(adding)}.`;
        errors.set(key, [...(errors.get(key) ?? []), d.message]);
      }
      const repository = await findRepository(ctx.db, s.caller, repo);
      return sendPage(
        reply,
        400,
        settingsView(CSS_HREF, s.viewer, { repository, settings, values, errors, saved: false }),
      );
    }
    const updated = adding === undefined ? 'settings' : 'monitor-added';
    return reply.redirect(`${request.url.split('?')[0] ?? ''}?updated=${updated}`, 303);
  };

  /** A queue's settings form, as saved or as posted with the API's messages beside their fields. */
  const queueSettingsPage = async (
    s: WebSession,
    repo: RepoTarget['repo'],
    branch: string,
    form: Form | undefined,
    reply: FastifyReply,
    saved = false,
  ) => {
    const current = await getQueue(ctx, s.caller, forge, { repo, targetBranch: branch });
    const repository = await findRepository(ctx.db, s.caller, repo);
    const onGitHub = isOnGitHub(ctx, repo);
    const values = queueFormValues(current);
    const errors = new Map<string, string[]>();
    if (form !== undefined) {
      try {
        await updateQueue(
          ctx,
          s.caller,
          forge,
          queuePatchFromForm(current, { repo, targetBranch: branch }, form),
        );
        return reply.redirect(`${paths.queueSettings(s.caller.orgSlug, repo, branch)}?updated=queue`, 303);
      } catch (error) {
        if (
          !(
            error instanceof AppError &&
            (error.status === 400 || error.status === 409 || error.status === 422)
          )
        )
          throw error;
        for (const key of Object.keys(values))
          values[key] = form[key] ?? (key in QUEUE_CHOICES ? (values[key] ?? '') : '');
        const details = error.details ?? [{ path: '', expected: '', message: error.message }];
        for (const d of details) {
          const field = queueFieldOf(d);
          const key = field in values ? field : '';
          errors.set(key, [...(errors.get(key) ?? []), d.message]);
        }
      }
    }
    return sendPage(
      reply,
      errors.size > 0 ? 400 : 200,
      queueSettingsView(CSS_HREF, s.viewer, { repository, branch, onGitHub, values, errors, saved }),
    );
  };

  await app.register(async (web) => {
    web.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(String(body))));
      },
    );
    web.setErrorHandler(async (error, request, reply) => {
      const s = await sessionOf(request, reply).catch(() => undefined);
      if (error instanceof AppError && error.status === 404) return notFound(reply, s);
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
      const s = await sessionOf(request, reply);
      return reply.redirect(s === undefined ? '/login' : `/${encodeURIComponent(s.caller.orgSlug)}`, 302);
    });

    web.get('/login', hide, async (request, reply) => {
      const next = safeNext((request.query as Record<string, unknown>)['next']);
      const s = await sessionOf(request, reply);
      if (s !== undefined) return reply.redirect(next ?? `/${encodeURIComponent(s.caller.orgSlug)}`, 303);
      return sendPage(reply, 200, loginView(CSS_HREF, { next, error: undefined }));
    });

    web.post('/login', hide, async (request, reply) => {
      if (!sameOrigin(request)) return forbidden(reply, undefined);
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
      if (!sameOrigin(request)) return forbidden(reply, undefined);
      const s = await sessionOf(request, reply);
      if (s !== undefined && !sessions.checkCsrf(s.cookie, ((request.body ?? {}) as Form)['_csrf'])) {
        return forbidden(reply, s);
      }
      reply.header('set-cookie', sessions.clearCookie());
      return reply.redirect('/login', 303);
    });

    web.get(
      '/:org',
      page,
      orgPage(async (s, _request, reply) =>
        sendPage(reply, 200, overviewView(CSS_HREF, s.viewer, await organizationOverview(ctx, s.caller))),
      ),
    );

    web.get(
      '/:org/webhooks',
      page,
      orgPage(async (s, request, reply) => {
        const deleted = text((request.query as Form)['updated'], 20) === 'deleted';
        const webhooks = await listWebhooks(ctx, s.caller);
        return sendPage(reply, 200, webhooksView(CSS_HREF, s.viewer, { webhooks, deleted }));
      }),
    );

    // Added through the API's schema and use case; the answer is the page itself, the one place
    // the secret is ever shown (no-store, like every page), not a redirect that would lose it.
    web.post(
      '/:org/webhooks',
      page,
      orgPage(async (s, request, reply) => {
        const form = (request.body ?? {}) as Form;
        if (!sameOrigin(request) || !sessions.checkCsrf(s.cookie, form['_csrf'])) return forbidden(reply, s);
        try {
          const created = await createWebhook(ctx, s.caller, webhookFromForm(form));
          const webhooks = await listWebhooks(ctx, s.caller);
          return sendPage(reply, 200, webhooksView(CSS_HREF, s.viewer, { webhooks, created }));
        } catch (error) {
          if (!(error instanceof AppError && error.status === 400)) throw error;
          const errors = (error.details ?? []).map((d) => d.message);
          const webhooks = await listWebhooks(ctx, s.caller);
          return sendPage(
            reply,
            400,
            webhooksView(CSS_HREF, s.viewer, {
              webhooks,
              form,
              errors: errors.length > 0 ? errors : [error.message],
            }),
          );
        }
      }),
    );

    web.post(
      '/:org/webhooks/:id/delete',
      page,
      orgPage(async (s, request, reply) => {
        const form = (request.body ?? {}) as Form;
        if (!sameOrigin(request) || !sessions.checkCsrf(s.cookie, form['_csrf'])) return forbidden(reply, s);
        const { id } = request.params as { id: string };
        await deleteWebhook(ctx, s.caller, id);
        return reply.redirect(`${paths.webhooks(s.caller.orgSlug)}?updated=deleted`, 303);
      }),
    );

    // The link the analytics CLI prints for a failed test (its url_for_test_case): on to the test's page.
    web.get(
      '/:org/flaky-tests/test/:id',
      page,
      orgPage(async (s, request, reply) => {
        const { id } = request.params as { id: string };
        const repo = text((request.query as Form)['repo'], 500);
        const found = await findLinkedTest(ctx, s.caller, repo, id);
        if (found === undefined) return notFound(reply, s);
        return reply.redirect(paths.test(s.caller.orgSlug, found.repository, found.test.id), 302);
      }),
    );

    web.get(
      '/:org/repos/*',
      page,
      orgPage(async (s, request, reply) => {
        const segments = pathSegments(request.url) ?? [];
        const target = await resolve(s, segments.slice(2));
        if (target === undefined) return notFound(reply, s);
        const { repo, route } = target;
        const query = (request.query ?? {}) as Record<string, unknown>;
        switch (route.page) {
          case 'repo': {
            const q = listQuery(query);
            return sendPage(
              reply,
              200,
              repoView(CSS_HREF, s.viewer, await unhealthyTestsPage(ctx, s.caller, repo, q), q),
            );
          }
          case 'failing': {
            const q = failingQuery(query);
            return sendPage(
              reply,
              200,
              failingView(CSS_HREF, s.viewer, await failingTestsPage(ctx, s.caller, repo, q), q),
            );
          }
          case 'tests': {
            const q = allTestsQuery(query);
            return sendPage(
              reply,
              200,
              allTestsView(CSS_HREF, s.viewer, await allTestsPage(ctx, s.caller, repo, q), q),
            );
          }
          case 'settings': {
            const scope = { repo, org_url_slug: s.caller.orgSlug };
            const { settings } = await getSettings(ctx, s.caller, scope);
            const repository = await findRepository(ctx.db, s.caller, repo);
            const updated = text(query['updated'], 20);
            const saved = updated === 'settings' || updated === 'monitor-added' ? updated : false;
            return sendPage(
              reply,
              200,
              settingsView(CSS_HREF, s.viewer, {
                repository,
                settings,
                values: { ...formValues(settings), ...newMonitorValues() },
                errors: new Map(),
                saved,
              }),
            );
          }
          case 'queue-settings':
            return queueSettingsPage(
              s,
              repo,
              route.branch,
              undefined,
              reply,
              text(query['updated'], 20) === 'queue',
            );
          case 'test': {
            const data = await testPage(ctx, s.caller, repo, route.testId);
            return sendPage(
              reply,
              200,
              testView(CSS_HREF, s.viewer, data, text(query['updated'], 20) || undefined),
            );
          }
          case 'queue': {
            const data = await queuePage(ctx, s.caller, forge, repo, route.branch);
            return sendPage(
              reply,
              200,
              queueView(CSS_HREF, s.viewer, data, route.branch, ctx.now()),
              QUEUE_CSP,
            );
          }
          case 'run': {
            const data = await runPage(ctx, s.caller, repo, route.branch, route.runId);
            return sendPage(reply, 200, runView(CSS_HREF, s.viewer, data, route.branch, route.runId));
          }
          case 'pr': {
            const data = await prPage(ctx, s.caller, repo, route.branch, route.number);
            return sendPage(reply, 200, prView(CSS_HREF, s.viewer, data, route.branch));
          }
          case 'pull':
            return sendPage(
              reply,
              200,
              pullView(CSS_HREF, s.viewer, await pullPage(ctx, s.caller, repo, route.number)),
            );
          default:
            return notFound(reply, s);
        }
      }),
    );

    web.post(
      '/:org/repos/*',
      page,
      orgPage(async (s, request, reply) => {
        if (!sameOrigin(request)) return forbidden(reply, s);
        const form = (request.body ?? {}) as Form;
        if (!sessions.checkCsrf(s.cookie, form['_csrf'])) return forbidden(reply, s);
        const target = await resolve(s, (pathSegments(request.url) ?? []).slice(2));
        if (target?.route.page === 'settings') return saveSettingsForm(s, target.repo, form, request, reply);
        if (target?.route.page === 'queue-settings')
          return queueSettingsPage(s, target.repo, target.route.branch, form, reply);
        if (target === undefined || target.route.page !== 'test-action') return notFound(reply, s);
        const { repo, route } = target;
        const scope = { repo, org_url_slug: s.caller.orgSlug, test_id: route.testId };
        const reason = text(form['reason'], 500) || undefined;
        if (route.action === 'quarantine') {
          const setting = form['setting'] as OverrideSetting;
          if (!OVERRIDES.has(setting)) {
            return sendPage(
              reply,
              400,
              errorView(
                { viewer: s.viewer, css: CSS_HREF },
                'Request refused',
                'Choose Auto, Always quarantine or Never quarantine.',
              ),
            );
          }
          await overrideQuarantine(ctx, s.caller, { ...scope, setting, reason });
        } else {
          await flagTest(ctx, s.caller, { ...scope, flagged: form['flagged'] === 'true', reason });
        }
        const base = (request.url.split('?')[0] ?? '').replace(/\/(quarantine|flag)$/, '');
        return reply.redirect(`${base}?updated=${route.action}`, 303);
      }),
    );
  });
}
