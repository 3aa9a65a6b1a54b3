import { type Static, Type } from 'typebox';
import { testDetails } from '../../../app/health/read.ts';
import { sendKept } from '../../answer-cache.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { DetailedTest, TestDetailsBody } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Answer = Type.Object({ test: DetailedTest });

export function registerGetTestDetails(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/flaky-tests/get-test-details',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'One test case: status, failure rates, most common failures',
        body: TestDetailsBody,
        response: { 200: Answer, ...authenticatedErrors },
      },
    },
    async (request, reply) =>
      sendKept<Static<typeof Answer>>(
        reply,
        ctx.caches.answers.testDetails,
        await testDetails(ctx, callerOf(request), request.body),
      ),
  );
}
