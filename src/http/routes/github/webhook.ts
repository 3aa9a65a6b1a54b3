import { Type } from 'typebox';
import { receiveGitHubDelivery } from '../../../app/github/webhooks.ts';
import type { Api, RouteDeps } from '../../types.ts';
import { acceptRawBodies, header, rawBody, WEBHOOK_ERRORS } from '../webhook-intake.ts';

/**
 * GitHub's webhook deliveries (POST /webhooks/github): verified with the HMAC secret against the raw
 * bytes, stored, acknowledged, then processed in the background (`onDelivery` wakes the processor).
 */
export function registerGitHubWebhook(app: Api, deps: RouteDeps, onDelivery: () => void): void {
  acceptRawBodies(app);
  app.post(
    '/webhooks/github',
    {
      schema: {
        tags: ['github'],
        summary: 'GitHub App / repository webhook deliveries (signed with the webhook secret)',
        response: {
          202: Type.Object({ id: Type.String(), duplicate: Type.Boolean() }),
          ...WEBHOOK_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const result = await receiveGitHubDelivery(deps.ctx, {
        id: header(request, 'x-github-delivery'),
        event: header(request, 'x-github-event'),
        signature: header(request, 'x-hub-signature-256'),
        body: rawBody(request),
      });
      if (!result.duplicate) onDelivery();
      return reply.code(202).send(result);
    },
  );
}
