/** Merge-queue engine: a pure state machine. step(state, event, now) → { state, actions }. */
export type { QueueAction } from './actions.ts';
export { isTerminal, TERMINAL } from './context.ts';
export {
  type CreateQueueInput,
  createQueueState,
  DEFAULT_TEST_BRANCH_PREFIX,
  defaultSettings,
  parsePriority,
  queueStateFromJson,
} from './create.ts';
export type { CheckReport, PrSnapshot, QueueEvent, SettingsPatch, VerdictOverride } from './events.ts';
export { type Pruned, pruneHistory } from './prune.ts';
export {
  getPrRecord,
  getTestingDetails,
  listQueuedPrs,
  nextWakeAt,
  outstandingActions,
  queueStateName,
  type TestingDetails,
} from './read.ts';
export { type StepResult, step } from './step.ts';
export type * from './types.ts';
