import { Type } from 'typebox';
import { getSubmittedPullRequest } from '../../../app/queue/prs.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { EnqueuedPr, FlakeJudgement, MergePr, PrState, QueueRef } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

const { noBatch: _n, ...prFields } = EnqueuedPr.properties;

const SubmittedPr = Type.Object({
  ...prFields,
  readiness: Type.Object({
    hasImpactedTargets: Type.Boolean(),
    requiresImpactedTargets: Type.Boolean(),
    doesBaseBranchMatch: Type.Boolean(),
    gitHubMergeability: Type.Union([
      Type.Literal('unspecified'),
      Type.Literal('in_progress'),
      Type.Literal('mergeable'),
      Type.Literal('not_mergeable'),
    ]),
  }),
  forceEnqueued: Type.Boolean(),
  isCurrentlySubmittedToQueue: Type.Boolean(),
  stateReason: Type.String({ description: 'Mainline extension: why the PR is in its state' }),
  flakeProtection: Type.Optional(FlakeJudgement),
  history: Type.Array(Type.Object({ state: PrState, at: Type.String(), reason: Type.String() }), {
    description: 'Mainline extension: every state change of this submission',
  }),
});

export function registerGetSubmittedPr(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/getSubmittedPullRequest',
    {
      schema: {
        tags: ['merge queue'],
        summary: 'A submitted pull request: its state, why, and its history in the queue',
        body: Type.Object({ ...QueueRef, pr: MergePr }),
        response: { 200: SubmittedPr, ...authenticatedErrors },
      },
    },
    async (request) => getSubmittedPullRequest(ctx, callerOf(request), request.body),
  );
}
