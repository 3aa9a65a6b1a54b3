import type { Kysely } from 'kysely';

/**
 * GitHub label settings of a merge queue (terraform-provider-trunk sends and reads them back):
 * extensionEnabled (stored only), enqueueingLabel ('' = none), labelCommandsEnabled and
 * stateLabelsEnabled. Booleans are 0/1 integers as elsewhere; existing queues get the defaults
 * (everything off), which is what a new queue answers too.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('merge_queues')
    .addColumn('extension_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('merge_queues')
    .addColumn('enqueueing_label', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('merge_queues')
    .addColumn('label_commands_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('merge_queues')
    .addColumn('state_labels_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of [
    'state_labels_enabled',
    'label_commands_enabled',
    'enqueueing_label',
    'extension_enabled',
  ]) {
    await db.schema.alterTable('merge_queues').dropColumn(column).execute();
  }
}
