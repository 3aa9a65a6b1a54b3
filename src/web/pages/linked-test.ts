import type { FastifyInstance } from 'fastify';
import { findLinkedTest } from '../../app/dashboard/tests.ts';
import { paths } from '../paths.ts';
import { type Form, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';

/** The link the analytics CLI prints for a failed test (its url_for_test_case): on to the test's page. */
export function registerLinkedTest(web: FastifyInstance, w: Web, page: object): void {
  web.get(
    '/:org/flaky-tests/test/:id',
    page,
    w.orgPage(async (s, request, reply) => {
      const { id } = request.params as { id: string };
      const repo = text((request.query as Form)['repo'], 500);
      const found = await findLinkedTest(w.ctx, s.caller, repo, id);
      if (found === undefined) return w.notFound(reply, s);
      return reply.redirect(paths.test(s.caller.orgSlug, found.repository, found.test.id), 302);
    }),
  );
}
