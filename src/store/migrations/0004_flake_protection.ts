import type { Kysely } from 'kysely';

/**
 * Flake-aware merge queue: a per-queue flakeProtection setting, the uploads attached to each test run,
 * the judgement made of each failed run, and the retries spent per PR head.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('merge_queues')
    // null: take it from the repository's .mainline.yaml, else off.
    .addColumn('flake_protection', 'text')
    .execute();

  await db.schema
    .createTable('run_uploads')
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('upload_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('run_uploads_pk', ['queue_id', 'run_id', 'upload_id'])
    .execute();

  await db.schema
    .createTable('run_judgements')
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('tests', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('run_judgements_pk', ['queue_id', 'run_id'])
    .execute();

  await db.schema
    .createTable('flake_retries')
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    .addColumn('pr_number', 'integer', (c) => c.notNull())
    .addColumn('head_sha', 'text', (c) => c.notNull())
    .addColumn('retries', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('flake_retries_pk', ['queue_id', 'pr_number', 'head_sha'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['flake_retries', 'run_judgements', 'run_uploads'])
    await db.schema.dropTable(table).execute();
  await db.schema.alterTable('merge_queues').dropColumn('flake_protection').execute();
}
