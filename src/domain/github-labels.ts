import type { PrState } from './queue/types.ts';

/**
 * A queue's GitHub label settings (updateQueue extensionEnabled, enqueueingLabel, labelCommandsEnabled,
 * stateLabelsEnabled; docs/github.md "Labels"). A queue that never set them has them all off.
 */
export interface LabelSettings {
  /** Trunk's browser extension is shown: stored and answered, no effect here (no extension ships). */
  extensionEnabled: boolean;
  /** The label that submits a PR to the queue when a writer applies it; '' when none. */
  enqueueingLabel: string;
  /** The enqueueing label is a two-way command: it stays while the PR is queued, removing it cancels. */
  labelCommandsEnabled: boolean;
  /** The queue keeps one `mainline:` label on each of its PRs showing where it stands. */
  stateLabelsEnabled: boolean;
}

export const LABELS_OFF: LabelSettings = {
  extensionEnabled: false,
  enqueueingLabel: '',
  labelCommandsEnabled: false,
  stateLabelsEnabled: false,
};

/** Prefix of the state labels; an enqueueing label may not use it (the queue sets those itself). */
export const STATE_LABEL_PREFIX = 'mainline:';
/** GitHub refuses label names longer than this. */
export const LABEL_MAX_LENGTH = 50;

/** The state label of each PR state; null: none (a cancelled PR carries no state label). */
const STATE_LABELS: Record<PrState, string | null> = {
  not_ready: 'mainline:queued',
  pending: 'mainline:queued',
  testing: 'mainline:testing',
  tests_passed: 'mainline:testing',
  pending_failure: 'mainline:testing',
  merged: 'mainline:merged',
  failed: 'mainline:failed',
  cancelled: null,
};

/** Every state label the queue may set, so it can take off the ones that no longer apply. */
export const ALL_STATE_LABELS: readonly string[] = [
  ...new Set(Object.values(STATE_LABELS).filter((l): l is string => l !== null)),
];

export function stateLabelOf(state: PrState): string | null {
  return STATE_LABELS[state];
}

/**
 * What to change on a PR carrying `current` labels so that it shows `state`: its one state label on,
 * any other state label off. Labels that are not the queue's are never touched. GitHub compares label
 * names without regard to case, and so does this.
 */
export function stateLabelChanges(
  current: readonly string[],
  state: PrState,
): { add: string[]; remove: string[] } {
  const wanted = stateLabelOf(state);
  const lower = (s: string) => s.toLowerCase();
  const isState = (l: string) => ALL_STATE_LABELS.includes(lower(l));
  const remove = current.filter((l) => isState(l) && (wanted === null || lower(l) !== wanted));
  const add = wanted !== null && !current.some((l) => lower(l) === wanted) ? [wanted] : [];
  return { add, remove };
}

/** Why an enqueueing label cannot be used (for the 400 message), or null when it can. */
export function enqueueingLabelProblem(label: string): string | null {
  if (label !== label.trim()) return 'enqueueingLabel may not start or end with spaces';
  if (Array.from(label).length > LABEL_MAX_LENGTH)
    return `enqueueingLabel is longer than GitHub's ${LABEL_MAX_LENGTH} characters`;
  if (label.toLowerCase().startsWith(STATE_LABEL_PREFIX))
    return `enqueueingLabel may not start with "${STATE_LABEL_PREFIX}": those are the queue's state labels`;
  return null;
}

/**
 * What a label being applied to (labeled) or removed from (unlabeled) a PR asks of the queue, before
 * asking who did it: submit when the enqueueing label is applied; cancel when it is removed and label
 * commands are on; nothing otherwise (another label, no enqueueing label set, removal without label
 * commands: the queue itself takes the label off once it picked the PR up).
 */
export function labelCommand(
  settings: Pick<LabelSettings, 'enqueueingLabel' | 'labelCommandsEnabled'>,
  action: string | undefined,
  label: string | undefined,
): 'submit' | 'cancel' | null {
  if (settings.enqueueingLabel === '' || label === undefined) return null;
  if (label.toLowerCase() !== settings.enqueueingLabel.toLowerCase()) return null;
  if (action === 'labeled') return 'submit';
  if (action === 'unlabeled' && settings.labelCommandsEnabled) return 'cancel';
  return null;
}
