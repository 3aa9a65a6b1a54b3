import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RepoRef } from '../../app/repositories.ts';
import { pathSegments, type RepoRoute } from '../paths.ts';
import type { Form } from '../respond.ts';
import type { Web, WebSession } from '../session-plugin.ts';
import { showAllTests } from './all-tests.ts';
import { showDurations } from './durations.ts';
import { showFailing } from './failing.ts';
import { showPr, showPull, showQueue, showRun } from './queue.ts';
import { queueSettingsPage } from './queue-settings.ts';
import { saveSettingsForm, showSettings } from './settings.ts';
import { showTest, testAction } from './test.ts';
import { showUnhealthy } from './unhealthy.ts';

/** A request for a page of one repository, its path resolved to the repository and the page. */
export interface RepoRequest<R extends RepoRoute = RepoRoute> {
  readonly s: WebSession;
  readonly repo: RepoRef;
  readonly route: R;
  readonly query: Record<string, unknown>;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
}

/**
 * `/{org}/repos/{host}/{owner…}/{name}…`: one route for every page of a repository, since only the
 * data tells where the repository's path ends (web/paths.ts, repoTargets); each page is in its file.
 */
export function registerRepoPages(web: FastifyInstance, w: Web, page: object): void {
  web.get(
    '/:org/repos/*',
    page,
    w.orgPage(async (s, request, reply) => {
      const segments = pathSegments(request.url) ?? [];
      const target = await w.resolve(s, segments.slice(2));
      if (target === undefined) return w.notFound(reply, s);
      const { repo, route } = target;
      const r = { s, repo, query: (request.query ?? {}) as Record<string, unknown>, request, reply };
      switch (route.page) {
        case 'repo':
          return showUnhealthy(w, { ...r, route });
        case 'failing':
          return showFailing(w, { ...r, route });
        case 'tests':
          return showAllTests(w, { ...r, route });
        case 'durations':
          return showDurations(w, { ...r, route });
        case 'settings':
          return showSettings(w, { ...r, route });
        case 'queue-settings':
          return queueSettingsPage(w, { ...r, route }, undefined);
        case 'test':
          return showTest(w, { ...r, route });
        case 'queue':
          return showQueue(w, { ...r, route });
        case 'run':
          return showRun(w, { ...r, route });
        case 'pr':
          return showPr(w, { ...r, route });
        case 'pull':
          return showPull(w, { ...r, route });
        default:
          return w.notFound(reply, s);
      }
    }),
  );

  web.post(
    '/:org/repos/*',
    page,
    w.orgPage(async (s, request, reply) => {
      if (!w.sameOrigin(request)) return w.forbidden(reply, s);
      const form = (request.body ?? {}) as Form;
      if (!w.sessions.checkCsrf(s.cookie, form['_csrf'])) return w.forbidden(reply, s);
      const target = await w.resolve(s, (pathSegments(request.url) ?? []).slice(2));
      if (target === undefined) return w.notFound(reply, s);
      const { repo, route } = target;
      const r = { s, repo, query: (request.query ?? {}) as Record<string, unknown>, request, reply };
      if (route.page === 'settings') return saveSettingsForm(w, { ...r, route }, form);
      if (route.page === 'queue-settings') return queueSettingsPage(w, { ...r, route }, form);
      if (route.page !== 'test-action') return w.notFound(reply, s);
      return testAction(w, { ...r, route }, form);
    }),
  );
}
