import { Type } from 'typebox';
import { createQueue } from '../../../app/queue/queues.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, ErrorEnvelope } from '../../schemas/common.ts';
import { lowerCaseEnums, QueueMode, QueueRef, UInt32Min1 } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerCreateQueue(app: Api, { ctx, forge }: RouteDeps): void {
  app.post(
    '/createQueue',
    {
      preValidation: lowerCaseEnums,
      schema: {
        tags: ['merge queue'],
        summary:
          'Create a merge queue for a target branch (409 if it exists); other settings via updateQueue',
        body: Type.Object({
          ...QueueRef,
          mode: Type.Optional(QueueMode),
          concurrency: Type.Optional(UInt32Min1),
        }),
        response: { 200: Type.Object({}), 409: ErrorEnvelope, ...authenticatedErrors },
      },
    },
    async (request) => {
      await createQueue(ctx, callerOf(request), forge, request.body);
      return {};
    },
  );
}
