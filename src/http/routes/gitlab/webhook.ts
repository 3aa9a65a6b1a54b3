import { Type } from 'typebox';
import { receiveGitLabDelivery } from '../../../app/gitlab/events.ts';
import { gitlabForgeOf } from '../../../forge/router.ts';
import type { Api, RouteDeps } from '../../types.ts';
import { acceptRawBodies, header, rawBody, WEBHOOK_ERRORS } from '../webhook-intake.ts';

/**
 * GitLab's webhook deliveries (POST /webhooks/gitlab): the X-Gitlab-Token secret checked, a repeated
 * X-Gitlab-Event-UUID (or Idempotency-Key) acknowledged without effect, then carried out before the
 * answer (docs/gitlab.md).
 */
export function registerGitLabWebhook(app: Api, deps: RouteDeps): void {
  acceptRawBodies(app);
  app.post(
    '/webhooks/gitlab',
    {
      schema: {
        tags: ['gitlab'],
        summary: 'GitLab project or group webhook deliveries (checked with the secret token)',
        response: {
          202: Type.Object({ id: Type.String(), duplicate: Type.Boolean(), outcome: Type.String() }),
          ...WEBHOOK_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const result = await receiveGitLabDelivery(deps.ctx, gitlabForgeOf(deps.forge), deps.forge, {
        token: header(request, 'x-gitlab-token'),
        event: header(request, 'x-gitlab-event'),
        uuid: header(request, 'x-gitlab-event-uuid') ?? header(request, 'idempotency-key'),
        body: rawBody(request),
      });
      return reply.code(202).send(result);
    },
  );
}
