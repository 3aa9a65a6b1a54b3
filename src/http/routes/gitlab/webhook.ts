import { Type } from 'typebox';
import { receiveGitLabDelivery } from '../../../app/gitlab/events.ts';
import { gitlabForgeOf } from '../../../forge/router.ts';
import { ErrorEnvelope } from '../../schemas/common.ts';
import type { Api, RouteDeps } from '../../types.ts';

const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

/**
 * GitLab's webhook deliveries (POST /webhooks/gitlab): the X-Gitlab-Token secret checked, a repeated
 * X-Gitlab-Event-UUID (or Idempotency-Key) acknowledged without effect, then carried out before the
 * answer (docs/gitlab.md).
 */
export function registerGitLabWebhook(app: Api, deps: RouteDeps): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post(
    '/webhooks/gitlab',
    {
      schema: {
        tags: ['gitlab'],
        summary: 'GitLab project or group webhook deliveries (checked with the secret token)',
        response: {
          202: Type.Object({ id: Type.String(), duplicate: Type.Boolean(), outcome: Type.String() }),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          413: ErrorEnvelope,
          503: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const result = await receiveGitLabDelivery(deps.ctx, gitlabForgeOf(deps.forge), deps.forge, {
        token: header(request.headers['x-gitlab-token']),
        event: header(request.headers['x-gitlab-event']),
        uuid: header(request.headers['x-gitlab-event-uuid']) ?? header(request.headers['idempotency-key']),
        body,
      });
      return reply.code(202).send(result);
    },
  );
}
