import { Type } from 'typebox';
import { checkOrgSlug, listRepositories } from '../../../app/repositories.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, OrgUrlSlug, PageInfo, PageQuery } from '../../schemas/common.ts';
import { RepositoryRecord, repositoryRecord } from '../../schemas/repository.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerListRepositories(app: Api, { ctx, pageTokens }: RouteDeps): void {
  app.post(
    '/repositories/list',
    {
      schema: {
        tags: ['repositories'],
        summary: 'List the token’s organization’s repositories by host, owner, name (Mainline extension)',
        body: Type.Object({ page_query: PageQuery, org_url_slug: Type.Optional(OrgUrlSlug) }),
        response: {
          200: Type.Object({ repositories: Type.Array(RepositoryRecord), page: PageInfo }),
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      const { rows, page } = await listRepositories(ctx.db, caller, pageTokens, request.body.page_query);
      return {
        repositories: rows.map((r) => repositoryRecord(ctx.config.publicUrl, caller.orgSlug, r)),
        page,
      };
    },
  );
}
