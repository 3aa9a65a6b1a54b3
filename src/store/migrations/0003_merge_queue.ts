import { type Kysely, sql } from 'kysely';
import { serialType } from './dialect.ts';

/**
 * Merge queues: one row per (repository, target branch) holding the engine's whole state as JSON,
 * an outbox of the actions each step asked for, the pull requests and commit statuses of the built-in
 * git forge, and a lease so one runner at a time drives a queue.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('merge_queues')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('wake_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addUniqueConstraint('merge_queues_branch', ['repo_id', 'branch'])
    .execute();

  await db.schema
    .createTable('queue_actions')
    .addColumn('id', serialType(db), (c) => c.primaryKey())
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('done_at', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .execute();
  await sql`create index queue_actions_pending on queue_actions (queue_id, id) where done_at is null`.execute(
    db,
  );

  await db.schema
    .createTable('git_pull_requests')
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('author', 'text', (c) => c.notNull())
    .addColumn('head_branch', 'text', (c) => c.notNull())
    .addColumn('base_branch', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('git_pull_requests_pk', ['repo_id', 'number'])
    .execute();

  // Impacted targets per PR head, kept even before the PR is submitted (merge-action uploads them early).
  await db.schema
    .createTable('impacted_targets')
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('pr_number', 'integer', (c) => c.notNull())
    .addColumn('head_sha', 'text', (c) => c.notNull())
    .addColumn('targets', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('impacted_targets_pk', ['repo_id', 'pr_number', 'head_sha'])
    .execute();

  await db.schema
    .createTable('commit_statuses')
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('commit_statuses_pk', ['repo_id', 'sha', 'context'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'commit_statuses',
    'impacted_targets',
    'git_pull_requests',
    'queue_actions',
    'merge_queues',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
