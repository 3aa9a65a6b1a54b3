import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { queueRead } from '../../../app/queue/reads.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { EnqueuedPr, QueueConfig, QueueRef } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerGetQueue(app: Api, { ctx, forge }: RouteDeps): void {
  app.post(
    '/getQueue',
    {
      schema: {
        tags: ['merge queue'],
        summary: 'A queue’s settings and the pull requests in it, in queue order',
        body: Type.Object(QueueRef),
        response: {
          200: Type.Object({ ...QueueConfig.properties, enqueuedPullRequests: Type.Array(EnqueuedPr) }),
          ...authenticatedErrors,
        },
      },
    },
    async (request, reply) => {
      const read = await queueRead(ctx, callerOf(request), forge, request.body);
      // The answer kept for its key (app/queue/kept-answers.ts), serialized by this route's schema.
      const bytes = ctx.caches.queueAnswers.bytes(
        read.queueId,
        read.key,
        () => reply.serialize(read.make()) as string,
      );
      // Bytes are sent as they are: Fastify serializes objects only.
      const raw: FastifyReply = reply;
      return raw.type('application/json; charset=utf-8').send(bytes);
    },
  );
}
