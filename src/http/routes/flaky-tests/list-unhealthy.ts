import type { Static } from 'typebox';
import { listUnhealthyTests } from '../../../app/health/read.ts';
import { sendKept } from '../../answer-cache.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { ListUnhealthyBody, UnhealthyPage } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerListUnhealthy(app: Api, { ctx, pageTokens }: RouteDeps): void {
  app.post(
    '/flaky-tests/list-unhealthy-tests',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'A page of the repository’s FLAKY or BROKEN tests, most PRs impacted first',
        body: ListUnhealthyBody,
        response: { 200: UnhealthyPage, ...authenticatedErrors },
      },
    },
    async (request, reply) =>
      sendKept<Static<typeof UnhealthyPage>>(
        reply,
        ctx.caches.answers.unhealthyPages,
        await listUnhealthyTests(ctx, callerOf(request), pageTokens, request.body),
      ),
  );
}
