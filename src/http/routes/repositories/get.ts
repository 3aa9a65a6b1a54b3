import { type Static, Type } from 'typebox';
import { checkOrgSlug, findRepository, repositoryAnswerKey } from '../../../app/repositories.ts';
import { sendKept } from '../../answer-cache.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, OrgUrlSlug, RepoRef } from '../../schemas/common.ts';
import { RepositoryRecord, repositoryRecord } from '../../schemas/repository.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Answer = Type.Object({ repository: RepositoryRecord });

export function registerGetRepository(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/repositories/get',
    {
      schema: {
        tags: ['repositories'],
        summary: 'Read one repository of the token’s organization (Mainline extension)',
        body: Type.Object({ repo: RepoRef, org_url_slug: Type.Optional(OrgUrlSlug) }),
        response: { 200: Answer, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      // Kept for good: a repository's identity never changes (repositoryAnswerKey).
      return sendKept<Static<typeof Answer>>(reply, ctx.caches.answers.repositories, {
        key: repositoryAnswerKey(ctx, caller, request.body.repo),
        now: ctx.now(),
        make: async () => {
          const repository = await findRepository(ctx.db, caller, request.body.repo);
          return {
            value: { repository: repositoryRecord(ctx.config.publicUrl, caller.orgSlug, repository) },
            until: Number.POSITIVE_INFINITY,
          };
        },
      });
    },
  );
}
