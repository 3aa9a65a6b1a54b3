import { checkOrgSlug } from '../../../app/repositories.ts';
import { createWebhook } from '../../../app/webhooks-out/endpoints.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { CreatedWebhook, CreateWebhookBody } from '../../schemas/webhooks.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerCreateWebhook(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/webhooks/create',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Add an outgoing webhook: signed JSON events POSTed to a URL (Mainline extension)',
        body: CreateWebhookBody,
        response: { 200: CreatedWebhook, ...authenticatedErrors },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      return createWebhook(ctx, caller, request.body);
    },
  );
}
