import { Type } from 'typebox';
import { checkOrgSlug, createRepository } from '../../../app/repositories.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, ErrorEnvelope, OrgUrlSlug, RepoRef } from '../../schemas/common.ts';
import { RepositoryRecord, repositoryRecord } from '../../schemas/repository.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerCreateRepository(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/repositories/create',
    {
      schema: {
        tags: ['repositories'],
        summary:
          'Create a repository explicitly (Mainline extension; uploads and createQueue also create one)',
        body: Type.Object({ repo: RepoRef, org_url_slug: Type.Optional(OrgUrlSlug) }),
        response: {
          200: Type.Object({ repository: RepositoryRecord }),
          409: ErrorEnvelope,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      const repository = await createRepository(ctx.db, caller, request.body.repo, ctx.now());
      return { repository: repositoryRecord(ctx.config.publicUrl, caller.orgSlug, repository) };
    },
  );
}
