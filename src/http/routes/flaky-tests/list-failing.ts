import type { FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import { listFailingTests } from '../../../app/health/read.ts';
import { KEPT_PAGES, ReadAnswers } from '../../../app/health/read-answers.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { DetailedPage, ListFailingBody } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerListFailing(app: Api, { ctx, pageTokens }: RouteDeps): void {
  const answers = ctx.readAnswers?.failingPages ?? new ReadAnswers(KEPT_PAGES);
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
    async (request, reply) => {
      const { key, now, make } = await listFailingTests(ctx, callerOf(request), pageTokens, request.body);
      const bytes = await answers.bytes(
        key,
        now,
        make,
        (value: Static<typeof DetailedPage>) => reply.serialize(value) as string,
      );
      // Bytes are sent as they are: Fastify serializes objects only.
      const raw: FastifyReply = reply;
      return raw.type('application/json; charset=utf-8').send(bytes);
    },
  );
}
