import type { Static } from 'typebox';
import { listQuarantinedTests } from '../../../app/health/read.ts';
import { sendKept } from '../../answer-cache.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { ListQuarantinedBody, QuarantinedPage } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerListQuarantined(app: Api, { ctx, pageTokens }: RouteDeps): void {
  app.post(
    '/flaky-tests/list-quarantined-tests',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'A page of the repository’s quarantined tests, by name',
        body: ListQuarantinedBody,
        response: { 200: QuarantinedPage, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { key, answer } = await listQuarantinedTests(ctx, callerOf(request), pageTokens, request.body);
      // Named by the repository's health version alone: kept while the key names it.
      const make = async () => ({ value: await answer(), until: Number.POSITIVE_INFINITY });
      return sendKept<Static<typeof QuarantinedPage>>(reply, ctx.caches.answers.quarantined, {
        key,
        now: ctx.now(),
        make,
      });
    },
  );
}
