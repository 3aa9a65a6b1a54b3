import type { Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { AppError, type ErrorDetail } from '../domain/errors.ts';
import { UpdateQueueBody } from '../http/schemas/queue.ts';
import { findNul, nulError, type SchemaIssue, toDetails } from '../http/validation.ts';
import type { FormValues } from './settings-form.ts';

/**
 * The dashboard's merge-queue settings form (docs/dashboard.md, "Settings"): its fields are named
 * as updateQueue's body fields; the fields changed from the queue's record become an updateQueue
 * body, checked by the API's schema, then passed to the same use case. The queue's state (pause,
 * drain) is not a setting of this form.
 */
export const QUEUE_NUMBERS = [
  'concurrency',
  'bisectionConcurrency',
  'testingTimeoutMinutes',
  'pendingFailureDepth',
  'batchingMaxWaitTimeMinutes',
  'batchingMinSize',
  'batchingMaxSize',
] as const;
export const QUEUE_BOOLEANS = [
  'canOptimisticallyMerge',
  'batch',
  'commentsEnabled',
  'commandsEnabled',
  'createPrsForTestingBranches',
  'statusCheckEnabled',
  'extensionEnabled',
  'labelCommandsEnabled',
  'stateLabelsEnabled',
] as const;
export const QUEUE_CHOICES = {
  mode: ['single', 'parallel'],
  mergeMethod: ['merge_commit', 'squash', 'rebase'],
  directMergeMode: ['off', 'always'],
  optimizationMode: ['off', 'bisection_skip_redundant_tests'],
  flakeProtection: ['off', 'ignore_quarantined', 'retry_flaky'],
} as const;

type QueueRecord = Record<string, unknown>;

/** The form's values for the queue's record as it is. */
export function queueFormValues(q: QueueRecord): FormValues {
  const v: FormValues = {};
  for (const k of QUEUE_NUMBERS) v[k] = String(q[k] ?? '');
  for (const k of QUEUE_BOOLEANS) v[k] = q[k] === true ? 'on' : '';
  for (const k of Object.keys(QUEUE_CHOICES)) v[k] = q[k] === undefined ? '' : String(q[k]);
  v['requiredStatuses'] = ((q['requiredStatuses'] as string[] | undefined) ?? []).join('\n');
  v['enqueueingLabel'] = String(q['enqueueingLabel'] ?? '');
  return v;
}

const bodyCheck = Compile(UpdateQueueBody);

/**
 * The updateQueue body a posted form asks for: only the fields whose value differs from the queue's
 * record (so a setting nobody touched is never re-sent), checked by the API's schema with the API's
 * messages. An emptied list of required statuses is `deleteRequiredStatuses` (back to the ones found
 * on the forge).
 */
export function queuePatchFromForm(
  current: QueueRecord,
  scope: { repo: { host: string; owner: string; name: string }; targetBranch: string },
  form: Record<string, string | undefined>,
): Static<typeof UpdateQueueBody> {
  const was = queueFormValues(current);
  const body: Record<string, unknown> = { ...scope };
  for (const k of QUEUE_NUMBERS) {
    const raw = (form[k] ?? '').trim();
    if (raw === was[k]) continue;
    const n = Number(raw);
    body[k] = raw !== '' && Number.isFinite(n) ? n : raw;
  }
  for (const k of QUEUE_BOOLEANS) {
    const on = form[k] === 'on';
    if (on !== (was[k] === 'on')) body[k] = on;
  }
  for (const k of Object.keys(QUEUE_CHOICES)) {
    const value = form[k];
    if (value !== undefined && value !== '' && value !== was[k]) body[k] = value;
  }
  const statuses = (form['requiredStatuses'] ?? '')
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (statuses.join('\n') !== was['requiredStatuses']) {
    if (statuses.length === 0) body['deleteRequiredStatuses'] = true;
    else body['requiredStatuses'] = statuses;
  }
  const label = form['enqueueingLabel'] ?? '';
  if (label !== was['enqueueingLabel']) body['enqueueingLabel'] = label;
  const nul = findNul(body);
  if (nul !== undefined) throw nulError(nul);
  if (bodyCheck.Check(body)) return body as Static<typeof UpdateQueueBody>;
  const details = toDetails([...bodyCheck.Errors(body)] as unknown as SchemaIssue[], 'body');
  const shown = details.slice(0, 3).map((d) => d.message);
  throw new AppError('VALIDATION_FAILED', `Invalid request: ${shown.join('; ')}`, { details });
}

/** The form field a detail's path names (`$.requiredStatuses[2]` → `requiredStatuses`). */
export function queueFieldOf(detail: ErrorDetail): string {
  return detail.path.replace(/^\$\.?/, '').replace(/\[\d+\].*$/, '');
}
