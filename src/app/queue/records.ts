import { type PrEntry, type QueueState, queueStateName } from '../../domain/queue/index.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** The required statuses a new run would use: the queue's own, else the config file's, else branch protection. */
export function effectiveRequiredStatuses(s: QueueState): string[] {
  const r = s.requiredStatuses;
  return [...(r.mergeInstance ?? r.serviceConfig ?? r.branchProtection ?? [])];
}

/** The merge-queue settings record of the spec (the response of updateQueue; getQueue adds PRs). */
export function queueConfigRecord(s: QueueState) {
  const c = s.settings;
  return {
    state: queueStateName(s),
    branch: s.branch,
    concurrency: c.concurrency,
    testingTimeoutMinutes: c.testingTimeoutMinutes,
    mode: c.mode,
    canOptimisticallyMerge: c.canOptimisticallyMerge,
    pendingFailureDepth: c.pendingFailureDepth,
    batch: c.batch,
    batchingMaxWaitTimeMinutes: c.batchingMaxWaitTimeMinutes,
    batchingMinSize: c.batchingMinSize,
    ...(c.batchingMaxSize !== undefined ? { batchingMaxSize: c.batchingMaxSize } : {}),
    createPrsForTestingBranches: c.createPrsForTestingBranches,
    commentsEnabled: c.commentsEnabled,
    commandsEnabled: c.commandsEnabled,
    statusCheckEnabled: c.statusCheckEnabled,
    bisectionConcurrency: c.bisectionConcurrency,
    requiredStatuses: effectiveRequiredStatuses(s),
    directMergeMode: c.directMergeMode,
    optimizationMode: c.optimizationMode,
    mergeMethod: c.mergeMethod,
    // A mode change still waiting for the PRs in flight, also when the state shown is paused or draining.
    ...(s.pendingMode !== null ? { pendingMode: s.pendingMode } : {}),
  };
}

/** A PR as getQueue's enqueuedPullRequests and listPullRequests show it. */
export function enqueuedPrRecord(e: PrEntry) {
  return {
    id: e.id,
    state: e.state,
    stateChangedAt: iso(e.stateChangedAt),
    priorityValue: e.priorityValue,
    priorityName: e.priorityName,
    skipTheLine: e.priorityName === 'urgent',
    noBatch: e.noBatch,
    prNumber: e.number,
    prTitle: e.title,
    prSha: e.headSha,
    prBaseBranch: e.baseBranch,
    prAuthor: e.author,
  };
}
