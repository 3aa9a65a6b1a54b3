import { Type } from 'typebox';
import { checkOrgSlug } from '../../../app/repositories.ts';
import { listWebhooks } from '../../../app/webhooks-out/endpoints.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { Scope, WebhookRecord } from '../../schemas/webhooks.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerListWebhooks(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/webhooks/list',
    {
      schema: {
        tags: ['webhooks'],
        summary:
          'List the organization’s outgoing webhooks, oldest first, without secrets (Mainline extension)',
        body: Type.Object(Scope),
        response: { 200: Type.Object({ webhooks: Type.Array(WebhookRecord) }), ...authenticatedErrors },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      return { webhooks: await listWebhooks(ctx, caller) };
    },
  );
}
