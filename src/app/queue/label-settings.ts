import type { Queryable } from '../../db/bulk.ts';
import { AppError } from '../../domain/errors.ts';
import { enqueueingLabelProblem, type LabelSettings } from '../../domain/github-labels.ts';
import { type QueueLabelColumns, type QueueRow, saveQueueLabelSettings } from '../../store/queue/queues.ts';

/** The queue's label settings from its row (a row read before migration 0017 reads as all off). */
export function labelSettingsOf(
  row: Pick<
    QueueRow,
    'extension_enabled' | 'enqueueing_label' | 'label_commands_enabled' | 'state_labels_enabled'
  >,
): LabelSettings {
  return {
    extensionEnabled: Number(row.extension_enabled ?? 0) === 1,
    enqueueingLabel: row.enqueueing_label ?? '',
    labelCommandsEnabled: Number(row.label_commands_enabled ?? 0) === 1,
    stateLabelsEnabled: Number(row.state_labels_enabled ?? 0) === 1,
  };
}

/**
 * Checks and stores the label fields of an updateQueue body (those left out stay as they are) and
 * answers the settings now in force. An enqueueing label GitHub cannot have, or one named like the
 * queue's own state labels, is a 400 saying so, and nothing is stored.
 */
export async function updateLabelSettings(
  db: Queryable,
  row: QueueRow,
  patch: Partial<LabelSettings>,
): Promise<LabelSettings> {
  const columns: QueueLabelColumns = {};
  if (patch.enqueueingLabel !== undefined) {
    const problem = enqueueingLabelProblem(patch.enqueueingLabel);
    if (problem !== null) throw new AppError('BAD_REQUEST', `${problem}; send "" for no enqueueing label`);
    columns.enqueueing_label = patch.enqueueingLabel;
  }
  const flag = (v: boolean | undefined) => (v === undefined ? undefined : v ? 1 : 0);
  const extension = flag(patch.extensionEnabled);
  const commands = flag(patch.labelCommandsEnabled);
  const states = flag(patch.stateLabelsEnabled);
  if (extension !== undefined) columns.extension_enabled = extension;
  if (commands !== undefined) columns.label_commands_enabled = commands;
  if (states !== undefined) columns.state_labels_enabled = states;
  await saveQueueLabelSettings(db, row.id, columns);
  return labelSettingsOf({ ...row, ...columns });
}
