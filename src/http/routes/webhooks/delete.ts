import { Type } from 'typebox';
import { checkOrgSlug } from '../../../app/repositories.ts';
import { deleteWebhook } from '../../../app/webhooks-out/endpoints.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { Scope, WebhookId } from '../../schemas/webhooks.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerDeleteWebhook(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/webhooks/delete',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete an outgoing webhook and its deliveries, sent or not (Mainline extension)',
        body: Type.Object({ id: WebhookId, ...Scope }),
        response: { 200: Type.Object({}), ...authenticatedErrors },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      await deleteWebhook(ctx, caller, request.body.id);
      return {};
    },
  );
}
