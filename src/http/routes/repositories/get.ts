import { Type } from 'typebox';
import { checkOrgSlug, findRepository } from '../../../app/repositories.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, OrgUrlSlug, RepoRef } from '../../schemas/common.ts';
import { RepositoryRecord, repositoryRecord } from '../../schemas/repository.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerGetRepository(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/repositories/get',
    {
      schema: {
        tags: ['repositories'],
        summary: 'Read one repository of the token’s organization (Mainline extension)',
        body: Type.Object({ repo: RepoRef, org_url_slug: Type.Optional(OrgUrlSlug) }),
        response: { 200: Type.Object({ repository: RepositoryRecord }), ...authenticatedErrors },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      const repository = await findRepository(ctx.db, caller, request.body.repo);
      return { repository: repositoryRecord(ctx.config.publicUrl, caller.orgSlug, repository) };
    },
  );
}
