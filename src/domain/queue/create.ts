import { IntMap } from '../../lib/int-map.ts';
import type { Mode, PrEntry, PriorityName, QueueSettings, QueueState } from './types.ts';

export const DEFAULT_TEST_BRANCH_PREFIX = 'mainline-merge';

const PRIORITY_VALUES: Record<PriorityName, number> = { urgent: 0, high: 10, medium: 100, low: 200 };

export interface CreateQueueInput {
  branch: string;
  /** Head of the target branch when the queue is created. */
  targetHead: string;
  /** Seed for ids of test runs and submissions: `<idSeed>-<n>` (e.g. a UUID chosen by the caller). */
  idSeed: string;
  mode?: Mode;
  concurrency?: number;
  settings?: Partial<QueueSettings>;
}

/** Settings of a new queue (statemachine.md §1 defaults). */
export function defaultSettings(concurrency = 5): QueueSettings {
  return {
    mode: 'single',
    concurrency,
    bisectionConcurrency: concurrency,
    testingTimeoutMinutes: 300,
    canOptimisticallyMerge: false,
    pendingFailureDepth: 0,
    batch: false,
    batchingMaxWaitTimeMinutes: 5,
    batchingMinSize: 4,
    createPrsForTestingBranches: true,
    commentsEnabled: true,
    commandsEnabled: true,
    statusCheckEnabled: true,
    // Off by default: a direct merge skips the test branch, so it is opt-in (and even then only for a
    // ready PR, whose own required checks passed, based on the target's tip).
    directMergeMode: 'off',
    optimizationMode: 'off',
    mergeMethod: 'squash',
    testBranchPrefix: DEFAULT_TEST_BRANCH_PREFIX,
  };
}

/** A new, empty, running queue. */
export function createQueueState(input: CreateQueueInput): QueueState {
  const base = defaultSettings(input.concurrency);
  return {
    version: 1,
    branch: input.branch,
    settings: { ...base, mode: input.mode ?? base.mode, ...input.settings },
    requested: 'running',
    pendingMode: null,
    requiredStatuses: { mergeInstance: null, serviceConfig: null, branchProtection: null },
    targetHead: input.targetHead,
    lineage: [{ sha: input.targetHead, prNumber: null }],
    deferredTargetSha: null,
    idSeed: input.idSeed,
    nextSeq: 1,
    prs: new IntMap(),
    order: [],
    runs: {},
    bisections: [],
    merging: null,
  };
}

/** Priority of a submission: a name or 0–255 (0 highest); missing means medium. */
export function parsePriority(priority: number | PriorityName | null | undefined): {
  value: number;
  name: string;
  usedDefault: boolean;
} {
  if (priority === null || priority === undefined) return { value: 100, name: 'medium', usedDefault: true };
  if (typeof priority === 'number') {
    const value = Math.min(255, Math.max(0, Math.round(priority)));
    const named = (Object.keys(PRIORITY_VALUES) as PriorityName[]).find((n) => PRIORITY_VALUES[n] === value);
    return { value, name: named ?? String(value), usedDefault: false };
  }
  return { value: PRIORITY_VALUES[priority], name: priority, usedDefault: false };
}

/** A state from its JSON (JSON.stringify of a state: the PR map written as a plain object). */
export function queueStateFromJson(text: string): QueueState {
  const parsed = JSON.parse(text) as Omit<QueueState, 'prs'> & { prs: Record<string, PrEntry> };
  return { ...parsed, prs: IntMap.fromRecord(parsed.prs) };
}
