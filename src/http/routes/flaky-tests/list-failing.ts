import type { Static } from 'typebox';
import { listFailingTests } from '../../../app/health/read.ts';
import { sendKept } from '../../answer-cache.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { DetailedPage, ListFailingBody } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerListFailing(app: Api, { ctx, pageTokens }: RouteDeps): void {
  app.post(
    '/flaky-tests/list-failing-tests',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'Tests that failed in [start_time, end_time) (at most 7 days), most failures first',
        body: ListFailingBody,
        response: { 200: DetailedPage, ...authenticatedErrors },
      },
    },
    async (request, reply) =>
      sendKept<Static<typeof DetailedPage>>(
        reply,
        ctx.caches.answers.failingPages,
        await listFailingTests(ctx, callerOf(request), pageTokens, request.body),
      ),
  );
}
