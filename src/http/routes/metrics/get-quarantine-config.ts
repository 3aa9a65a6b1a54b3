import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { quarantineConfig } from '../../../app/health/quarantine-config.ts';
import { keptBodyValidator } from '../../body-checks.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, RepoRef } from '../../schemas/common.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Maybe = (t: ReturnType<typeof Type.String>) => Type.Optional(Type.Union([t, Type.Null()]));

/** A test as the uploader sends it: mixed casing, most fields nullable (trunk-api.md §3). */
const TestIdentifier = Type.Object({
  name: Maybe(Type.String()),
  parentName: Maybe(Type.String()),
  className: Maybe(Type.String()),
  file: Maybe(Type.String()),
  id: Maybe(Type.String()),
  variant: Maybe(Type.String()),
});

export function registerGetQuarantineConfig(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/metrics/getQuarantineConfig',
    {
      // The CLI sends the same test ids run after run: a large body is kept parsed (http/body-checks.ts).
      config: { keepParsedBody: true },
      // And its check, once passed, is not made again on the same kept value.
      validatorCompiler: keptBodyValidator(TypeBoxValidatorCompiler),
      schema: {
        tags: ['test results'],
        summary:
          'Which of these tests are quarantined (as trunk-analytics-cli asks before deciding its exit code)',
        body: Type.Object({
          repo: RepoRef,
          orgUrlSlug: Type.String({ minLength: 1, maxLength: 64 }),
          remoteUrls: Type.Optional(Type.Array(Type.String())),
          testIdentifiers: Type.Optional(Type.Array(TestIdentifier, { maxItems: 100_000 })),
        }),
        response: {
          200: Type.Object({ isDisabled: Type.Boolean(), testIds: Type.Array(Type.String()) }),
          ...authenticatedErrors,
        },
      },
    },
    async (request, reply) => {
      const answer = await quarantineConfig(ctx, callerOf(request), request.body);
      // All quarantined ids: bytes kept with the repository's index, sent as they are (Fastify
      // serializes objects only); they are what the response schema's serializer would write.
      if (Buffer.isBuffer(answer))
        return (reply as FastifyReply).type('application/json; charset=utf-8').send(answer);
      return answer;
    },
  );
}
