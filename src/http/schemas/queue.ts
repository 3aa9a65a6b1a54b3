import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { RepoRef } from './common.ts';

/** Schemas of the merge-queue family, as Trunk's published v1 spec (camelCase). */
export const UInt32Min1 = Type.Integer({ minimum: 1, maximum: 4294967295 });
export const TargetBranch = Type.String({ minLength: 1, maxLength: 255 });
export const QueueMode = Type.Union([Type.Literal('single'), Type.Literal('parallel')]);
export const RequestedQueueState = Type.Union([
  Type.Literal('running'),
  Type.Literal('paused'),
  Type.Literal('draining'),
]);
export const QueueStateName = Type.Union([...RequestedQueueState.anyOf, Type.Literal('switching_modes')]);
export const PrState = Type.Union([
  Type.Literal('not_ready'),
  Type.Literal('pending'),
  Type.Literal('testing'),
  Type.Literal('tests_passed'),
  Type.Literal('merged'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('pending_failure'),
]);
export const DirectMergeMode = Type.Union([Type.Literal('off'), Type.Literal('always')]);
export const OptimizationMode = Type.Union([
  Type.Literal('off'),
  Type.Literal('bisection_skip_redundant_tests'),
]);
export const MergeMethod = Type.Union([
  Type.Literal('merge_commit'),
  Type.Literal('squash'),
  Type.Literal('rebase'),
]);

export const QueueRef = { repo: RepoRef, targetBranch: TargetBranch };
/** The largest pull request number stored (a 32-bit signed integer; forges number PRs far below it). */
export const PR_NUMBER_MAX = 2147483647;
export const MergePr = Type.Object({ number: Type.Integer({ minimum: 0, maximum: PR_NUMBER_MAX }) });

export const FlakeProtection = Type.Union(
  [Type.Literal('off'), Type.Literal('ignore_quarantined'), Type.Literal('retry_flaky')],
  {
    description:
      'Mainline extension: how a failed run is judged by the tests that failed (off, ignore_quarantined, retry_flaky)',
  },
);

export const QueueConfig = Type.Object({
  state: QueueStateName,
  branch: Type.String(),
  concurrency: Type.Number(),
  testingTimeoutMinutes: Type.Number(),
  mode: QueueMode,
  canOptimisticallyMerge: Type.Boolean(),
  pendingFailureDepth: Type.Number(),
  batch: Type.Boolean(),
  batchingMaxWaitTimeMinutes: Type.Number(),
  batchingMinSize: Type.Number(),
  // Mainline's own, answered once set (updateQueue's batchingMaxSize).
  batchingMaxSize: Type.Optional(Type.Number()),
  createPrsForTestingBranches: Type.Boolean(),
  commentsEnabled: Type.Boolean(),
  commandsEnabled: Type.Boolean(),
  statusCheckEnabled: Type.Boolean(),
  bisectionConcurrency: Type.Number(),
  requiredStatuses: Type.Array(Type.String()),
  directMergeMode: DirectMergeMode,
  optimizationMode: OptimizationMode,
  mergeMethod: MergeMethod,
  // Sent and read back by terraform-provider-trunk (docs/github.md, Labels); off and "" when never set.
  extensionEnabled: Type.Boolean(),
  enqueueingLabel: Type.String(),
  labelCommandsEnabled: Type.Boolean(),
  stateLabelsEnabled: Type.Boolean(),
  flakeProtection: Type.Optional(FlakeProtection),
  pendingMode: Type.Optional(
    Type.Union([Type.Literal('single'), Type.Literal('parallel')], {
      description:
        'Mainline extension: the mode a requested switch waits to apply (PRs still in flight); absent when none waits',
    }),
  ),
});

export const EnqueuedPr = Type.Object({
  id: Type.Optional(Type.String()),
  state: Type.Optional(PrState),
  stateChangedAt: Type.String(),
  priorityValue: Type.Number(),
  priorityName: Type.String(),
  skipTheLine: Type.Boolean(),
  noBatch: Type.Boolean(),
  prNumber: Type.Number(),
  prTitle: Type.String(),
  prSha: Type.String(),
  prBaseBranch: Type.String(),
  prAuthor: Type.String(),
});

export const UpdateQueueBody = Type.Object({
  ...QueueRef,
  state: Type.Optional(RequestedQueueState),
  concurrency: Type.Optional(UInt32Min1),
  bisectionConcurrency: Type.Optional(UInt32Min1),
  testingTimeoutMinutes: Type.Optional(UInt32Min1),
  // 0 is accepted (the queue's default: a failed PR leaves at once); terraform-provider-trunk allows it.
  pendingFailureDepth: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
  canOptimisticallyMerge: Type.Optional(Type.Boolean()),
  batch: Type.Optional(Type.Boolean()),
  batchingMaxWaitTimeMinutes: Type.Optional(UInt32Min1),
  batchingMinSize: Type.Optional(UInt32Min1),
  // Mainline's own (Trunk's "target batch size"): batches grow up to it while the queue is long.
  batchingMaxSize: Type.Optional(UInt32Min1),
  mode: Type.Optional(QueueMode),
  commentsEnabled: Type.Optional(Type.Boolean()),
  commandsEnabled: Type.Optional(Type.Boolean()),
  createPrsForTestingBranches: Type.Optional(Type.Boolean()),
  directMergeMode: Type.Optional(DirectMergeMode),
  optimizationMode: Type.Optional(OptimizationMode),
  mergeMethod: Type.Optional(MergeMethod),
  statusCheckEnabled: Type.Optional(Type.Boolean()),
  requiredStatuses: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 }),
  ),
  deleteRequiredStatuses: Type.Optional(Type.Boolean()),
  flakeProtection: Type.Optional(FlakeProtection),
  // Sent by terraform-provider-trunk; stored, answered, and used on GitHub (docs/github.md, Labels).
  extensionEnabled: Type.Optional(Type.Boolean()),
  labelCommandsEnabled: Type.Optional(Type.Boolean()),
  stateLabelsEnabled: Type.Optional(Type.Boolean()),
  enqueueingLabel: Type.Optional(
    Type.String({
      maxLength: 50,
      description:
        'The GitHub label that submits a PR to this queue when a writer applies it; "" for none (Mainline: Trunk requires at least 1 character)',
    }),
  ),
});

const ENUM_FIELDS = [
  'state',
  'mode',
  'directMergeMode',
  'optimizationMode',
  'mergeMethod',
  'flakeProtection',
] as const;

/**
 * Enum values are accepted in any case (the docs' prose says RUNNING, PAUSED…) and stored and
 * emitted in lower case: a preValidation hook lower-cases them before the schema checks them.
 */
export async function lowerCaseEnums(request: FastifyRequest): Promise<void> {
  const body = request.body as Record<string, unknown> | null;
  if (body === null || typeof body !== 'object') return;
  for (const field of ENUM_FIELDS) {
    const value = body[field];
    if (typeof value === 'string') body[field] = value.toLowerCase();
  }
}

/** Mainline extensions: the results uploaded for a run and how flake protection judged it. */
export const RunTestResults = Type.Object({
  uploads: Type.Integer(),
  testCases: Type.Integer(),
  failures: Type.Integer(),
});
export const FlakeJudgement = Type.Object({
  decision: Type.Union([
    Type.Literal('ignored_quarantined'),
    Type.Literal('retried_flaky'),
    Type.Literal('real_failure'),
    Type.Literal('no_results'),
  ]),
  reason: Type.String(),
  tests: Type.Array(
    Type.Object({
      testId: Type.String(),
      name: Type.String(),
      quarantined: Type.Boolean(),
      status: Type.String(),
    }),
  ),
});
