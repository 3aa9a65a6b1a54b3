import type { FastifyReply } from 'fastify';
import { type Static, Type } from 'typebox';
import { testDetails } from '../../../app/health/read.ts';
import { KEPT_DETAILS, ReadAnswers } from '../../../app/health/read-answers.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { DetailedTest, TestDetailsBody } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Answer = Type.Object({ test: DetailedTest });

export function registerGetTestDetails(app: Api, { ctx }: RouteDeps): void {
  const answers = ctx.readAnswers?.testDetails ?? new ReadAnswers(KEPT_DETAILS);
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
    async (request, reply) => {
      const { key, now, make } = await testDetails(ctx, callerOf(request), request.body);
      const bytes = await answers.bytes(
        key,
        now,
        make,
        (value: Static<typeof Answer>) => reply.serialize(value) as string,
      );
      // Bytes are sent as they are: Fastify serializes objects only.
      const raw: FastifyReply = reply;
      return raw.type('application/json; charset=utf-8').send(bytes);
    },
  );
}
