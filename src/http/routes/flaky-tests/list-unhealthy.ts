import type { FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import { listUnhealthyTests } from '../../../app/health/read.ts';
import { KEPT_PAGES, ReadAnswers } from '../../../app/health/read-answers.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { ListUnhealthyBody, UnhealthyPage } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerListUnhealthy(app: Api, { ctx, pageTokens }: RouteDeps): void {
  const answers = ctx.readAnswers?.unhealthyPages ?? new ReadAnswers(KEPT_PAGES);
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
    async (request, reply) => {
      const { key, now, make } = await listUnhealthyTests(ctx, callerOf(request), pageTokens, request.body);
      const bytes = await answers.bytes(
        key,
        now,
        make,
        (value: Static<typeof UnhealthyPage>) => reply.serialize(value) as string,
      );
      // Bytes are sent as they are: Fastify serializes objects only.
      const raw: FastifyReply = reply;
      return raw.type('application/json; charset=utf-8').send(bytes);
    },
  );
}
