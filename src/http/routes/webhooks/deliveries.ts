import { Type } from 'typebox';
import { checkOrgSlug } from '../../../app/repositories.ts';
import { listWebhookDeliveries } from '../../../app/webhooks-out/endpoints.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { DeliveryRecord, Scope, WebhookId } from '../../schemas/webhooks.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerWebhookDeliveries(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/webhooks/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary:
          'An outgoing webhook’s recent deliveries, newest first, with their state (Mainline extension)',
        body: Type.Object({
          id: WebhookId,
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'default 20' })),
          ...Scope,
        }),
        response: { 200: Type.Object({ deliveries: Type.Array(DeliveryRecord) }), ...authenticatedErrors },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      checkOrgSlug(caller, request.body.org_url_slug);
      const deliveries = await listWebhookDeliveries(ctx, caller, request.body.id, request.body.limit ?? 20);
      return { deliveries };
    },
  );
}
