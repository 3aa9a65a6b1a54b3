import { Type } from 'typebox';
import { listPullRequests, queueMetrics, testingDetails } from '../../../app/queue/reads.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { EnqueuedPr, FlakeJudgement, PrState, QueueRef, RunTestResults } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

const TestingDetails = Type.Object({
  requiredStatuses: Type.Array(Type.String()),
  requiredStatusesSource: Type.Optional(
    Type.Union([
      Type.Literal('service_config'),
      Type.Literal('repo_provider_branch_protection'),
      Type.Literal('merge_instance'),
    ]),
  ),
  testBranch: Type.String(),
  testBranchSha: Type.String(),
  checkSuites: Type.Array(
    Type.Object({ checkRuns: Type.Array(Type.Object({ name: Type.String(), url: Type.String() })) }),
  ),
  statusChecks: Type.Array(
    Type.Object({
      context: Type.String(),
      url: Type.String(),
      state: Type.Optional(
        Type.Union([
          Type.Literal('ERROR'),
          Type.Literal('FAILURE'),
          Type.Literal('PENDING'),
          Type.Literal('SUCCESS'),
        ]),
      ),
    }),
  ),
  testedPullRequests: Type.Array(
    Type.Object({ prNumber: Type.Number(), prUrl: Type.String(), title: Type.String() }),
  ),
  createdAt: Type.Optional(Type.String()),
  status: Type.Optional(
    Type.Union([
      Type.Literal('in_progress'),
      Type.Literal('succeeded'),
      Type.Literal('failed'),
      Type.Literal('cancelled'),
    ]),
  ),
  impactedTargets: Type.Optional(Type.Array(Type.String())),
  impactedTargetsForTestedPrs: Type.Optional(Type.Array(Type.String())),
  dependentPrs: Type.Optional(Type.Array(Type.Number())),
  failureReason: Type.Optional(Type.String({ description: 'Mainline extension: why the run failed' })),
  testResults: Type.Optional(RunTestResults),
  flakeProtection: Type.Optional(FlakeJudgement),
});

export function registerQueueReads(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/listPullRequests',
    {
      schema: {
        tags: ['merge queue'],
        summary:
          'The queue’s pull requests in submission order; cursor and take (1–100, default 50) page through them',
        body: Type.Object({
          ...QueueRef,
          state: Type.Optional(PrState),
          since: Type.Optional(Type.String({ format: 'date-time' })),
          cursor: Type.Optional(Type.String({ format: 'uuid' })),
          take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        }),
        response: {
          200: Type.Object({
            pullRequests: Type.Array(EnqueuedPr),
            nextCursor: Type.Optional(Type.String()),
          }),
          ...authenticatedErrors,
        },
      },
    },
    async (request) => listPullRequests(ctx, callerOf(request), request.body),
  );
  app.post(
    '/getMergeQueueTestingDetails',
    {
      schema: {
        tags: ['merge queue'],
        summary:
          'What a test run tests: test branch, required statuses and their source, checks, pull requests',
        body: Type.Object({ ...QueueRef, testRunId: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: TestingDetails, ...authenticatedErrors },
      },
    },
    async (request) => testingDetails(ctx, callerOf(request), request.body),
  );
  app.get(
    '/getMergeQueueMetrics',
    {
      schema: {
        tags: ['merge queue'],
        summary:
          'Prometheus text (0.0.4) for the organization’s queues; repo=owner/name with repoHost narrows it',
        querystring: Type.Object({
          repo: Type.Optional(Type.String()),
          repoHost: Type.Optional(Type.String()),
        }),
      },
    },
    async (request, reply) => {
      reply.type('text/plain; version=0.0.4; charset=utf-8');
      return queueMetrics(ctx, callerOf(request), request.query);
    },
  );
}
