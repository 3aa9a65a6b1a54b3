import type { PrState } from './types.ts';

/**
 * The words each forge shows an author for a PR's state (status description, comment heading); one
 * table so GitHub and GitLab say the same, differing only in what the forge calls a PR.
 */
export function stateTexts(prNoun: string): Record<PrState, string> {
  return {
    not_ready: 'Waiting to be ready',
    pending: 'Queued',
    testing: 'Testing',
    tests_passed: 'Tests passed, merging',
    merged: 'Merged',
    failed: 'Failed',
    cancelled: 'Removed from the queue',
    pending_failure: `Tests failed, waiting on the ${prNoun} ahead`,
  };
}
