import { Type } from 'typebox';
import { getTestDetails } from '../../../app/health/read.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { DetailedTest, TestDetailsBody } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerGetTestDetails(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/flaky-tests/get-test-details',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'One test case: status, failure rates, most common failures',
        body: TestDetailsBody,
        response: { 200: Type.Object({ test: DetailedTest }), ...authenticatedErrors },
      },
    },
    async (request) => getTestDetails(ctx, callerOf(request), request.body),
  );
}
