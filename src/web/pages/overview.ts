import type { FastifyInstance } from 'fastify';
import { organizationOverview } from '../../app/dashboard/overview.ts';
import { CSS_HREF, sendPage } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { overviewView } from '../views/overview.ts';

/** `GET /{org}`: the organization's repositories. */
export function registerOverview(web: FastifyInstance, w: Web, page: object): void {
  web.get(
    '/:org',
    page,
    w.orgPage(async (s, _request, reply) =>
      sendPage(reply, 200, overviewView(CSS_HREF, s.viewer, await organizationOverview(w.ctx, s.caller))),
    ),
  );
}
