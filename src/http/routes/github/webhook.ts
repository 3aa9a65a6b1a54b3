import { Type } from 'typebox';
import { receiveGitHubDelivery } from '../../../app/github/webhooks.ts';
import { ErrorEnvelope } from '../../schemas/common.ts';
import type { Api, RouteDeps } from '../../types.ts';

const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

/**
 * GitHub's webhook deliveries (POST /webhooks/github): verified with the HMAC secret against the raw
 * bytes, stored, acknowledged, then processed in the background (`onDelivery` wakes the processor).
 */
export function registerGitHubWebhook(app: Api, deps: RouteDeps, onDelivery: () => void): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post(
    '/webhooks/github',
    {
      schema: {
        tags: ['github'],
        summary: 'GitHub App / repository webhook deliveries (signed with the webhook secret)',
        response: {
          202: Type.Object({ id: Type.String(), duplicate: Type.Boolean() }),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          413: ErrorEnvelope,
          503: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const result = await receiveGitHubDelivery(deps.ctx, {
        id: header(request.headers['x-github-delivery']),
        event: header(request.headers['x-github-event']),
        signature: header(request.headers['x-hub-signature-256']),
        body,
      });
      if (!result.duplicate) onDelivery();
      return reply.code(202).send(result);
    },
  );
}
