import { Type } from 'typebox';
import { getQueue } from '../../../app/queue/queues.ts';
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
    async (request) => getQueue(ctx, callerOf(request), forge, request.body),
  );
}
