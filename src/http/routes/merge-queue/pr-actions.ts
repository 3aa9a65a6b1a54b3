import { Type } from 'typebox';
import { cancelPullRequest, restartTests, submitPullRequest } from '../../../app/queue/prs.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { MergePr, QueueRef } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Ok = { 200: Type.Object({}), ...authenticatedErrors };
const PrBody = Type.Object({ ...QueueRef, pr: MergePr });

/** submitPullRequest, cancelPullRequest and restartTestsOnPullRequest: each answers {} (Trunk's EmptyOk). */
export function registerPrActions(app: Api, { ctx, forge }: RouteDeps): void {
  app.post(
    '/submitPullRequest',
    {
      schema: {
        tags: ['merge queue'],
        summary:
          'Queue a pull request; priority low/medium/high/urgent or 0–255 (0 highest); noBatch tests it alone',
        body: Type.Object({
          ...QueueRef,
          pr: MergePr,
          priority: Type.Optional(
            Type.Union([Type.Integer({ minimum: 0, maximum: 4294967295 }), Type.String(), Type.Null()]),
          ),
          noBatch: Type.Optional(Type.Boolean()),
        }),
        response: Ok,
      },
    },
    async (request) => {
      await submitPullRequest(ctx, callerOf(request), forge, request.body);
      return {};
    },
  );
  app.post(
    '/cancelPullRequest',
    {
      schema: {
        tags: ['merge queue'],
        summary: 'Take a pull request out of the queue',
        body: PrBody,
        response: Ok,
      },
    },
    async (request) => {
      await cancelPullRequest(ctx, callerOf(request), request.body);
      return {};
    },
  );
  app.post(
    '/restartTestsOnPullRequest',
    {
      schema: {
        tags: ['merge queue'],
        summary: 'Test a queued pull request again',
        body: PrBody,
        response: Ok,
      },
    },
    async (request) => {
      await restartTests(ctx, callerOf(request), request.body);
      return {};
    },
  );
}
