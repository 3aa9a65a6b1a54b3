import type { Static } from 'typebox';
import { listQuarantinedTests } from '../../../app/health/read.ts';
import { AnswerCache } from '../../answer-cache.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { ListQuarantinedBody, QuarantinedPage } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerListQuarantined(app: Api, { ctx, pageTokens }: RouteDeps): void {
  const answers = new AnswerCache();
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
      return answers.send(reply, key, async (): Promise<Static<typeof QuarantinedPage>> => answer());
    },
  );
}
