import { updateQueue } from '../../../app/queue/queues.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { lowerCaseEnums, QueueConfig, UpdateQueueBody } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerUpdateQueue(app: Api, { ctx, forge }: RouteDeps): void {
  app.post(
    '/updateQueue',
    {
      preValidation: lowerCaseEnums,
      schema: {
        tags: ['merge queue'],
        summary: 'Change a queue’s settings and state; answers the full settings record',
        body: UpdateQueueBody,
        response: { 200: QueueConfig, ...authenticatedErrors },
      },
    },
    async (request) => updateQueue(ctx, callerOf(request), forge, request.body),
  );
}
