import { type Static, Type } from 'typebox';
import { checkOrgSlug, repositoryPage } from '../../../app/repositories.ts';
import { sendKept } from '../../answer-cache.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, OrgUrlSlug, PageInfo, PageQuery } from '../../schemas/common.ts';
import { RepositoryRecord, repositoryRecord } from '../../schemas/repository.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Answer = Type.Object({ repositories: Type.Array(RepositoryRecord), page: PageInfo });

export function registerListRepositories(app: Api, { ctx, pageTokens }: RouteDeps): void {
  app.post(
    '/repositories/list',
    {
      schema: {
        tags: ['repositories'],
        summary: 'List the token’s organization’s repositories by host, owner, name (Mainline extension)',
        body: Type.Object({ page_query: PageQuery, org_url_slug: Type.Optional(OrgUrlSlug) }),
        response: { 200: Answer, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      const { key, now, make } = await repositoryPage(ctx, caller, pageTokens, request.body.page_query);
      // Kept while the key names it: the repository count in the key changes with the list.
      return sendKept<Static<typeof Answer>>(reply, ctx.caches.answers.repositoryLists, {
        key,
        now,
        make: async () => {
          const { rows, page } = await make();
          const repositories = rows.map((r) => repositoryRecord(ctx.config.publicUrl, caller.orgSlug, r));
          return { value: { repositories, page }, until: Number.POSITIVE_INFINITY };
        },
      });
    },
  );
}
