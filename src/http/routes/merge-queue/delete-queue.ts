import { Type } from 'typebox';
import { deleteQueue } from '../../../app/queue/queues.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { QueueRef } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerDeleteQueue(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/deleteQueue',
    {
      schema: {
        tags: ['merge queue'],
        summary: 'Delete an empty queue (400 while pull requests are in it)',
        body: Type.Object(QueueRef),
        response: { 200: Type.Object({}), ...authenticatedErrors },
      },
    },
    async (request) => {
      await deleteQueue(ctx, callerOf(request), request.body);
      return {};
    },
  );
}
