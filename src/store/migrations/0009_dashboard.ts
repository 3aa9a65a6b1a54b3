import { type Kysely, sql } from 'kysely';

/**
 * The web dashboard: a small table of per-repository daily figures (flaky, broken and quarantined
 * counts at the end of each day, uploads that day), filled on demand from the status history so the
 * overview never scans test results, and the indexes its reads need:
 * - status and quarantine history by time (the daily figures are derived from the transitions);
 * - uploads of a repository by time (uploads per day);
 * - a queue's archived runs and PRs by when they finished (recent history on the queue page).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dashboard_repo_days')
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    // Start of the UTC day, epoch ms.
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('flaky', 'integer', (c) => c.notNull())
    .addColumn('broken', 'integer', (c) => c.notNull())
    .addColumn('quarantined', 'integer', (c) => c.notNull())
    .addColumn('uploads', 'integer', (c) => c.notNull())
    // Tests tracked when computed; null for a day first computed after it ended.
    .addColumn('tests', 'integer')
    .addColumn('computed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('dashboard_repo_days_pk', ['repo_id', 'day'])
    .execute();
  await sql`create index test_case_events_kind_at on test_case_events (kind, at)`.execute(db);
  await sql`create index uploads_repo_created on uploads (repo_id, created_at)`.execute(db);
  await sql`create index queue_archive_recent on queue_archive (queue_id, kind, archived_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index queue_archive_recent`.execute(db);
  await sql`drop index uploads_repo_created`.execute(db);
  await sql`drop index test_case_events_kind_at`.execute(db);
  await db.schema.dropTable('dashboard_repo_days').execute();
}
