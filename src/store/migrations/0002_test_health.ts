import { type Kysely, sql } from 'kysely';
import { serialType } from './dialect.ts';

/**
 * Test health: uploads, test cases (with their precomputed status, quarantine and rollups), every
 * attempt as a result row, the history of each test, repository settings, and the snapshots that
 * make paging through a list with a changing sort key exact.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Bumped whenever anything a health list shows changes, so an unchanged list can reuse its snapshot.
  await db.schema
    .alterTable('repositories')
    .addColumn('health_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('repo_settings')
    .addColumn('repo_id', 'text', (c) => c.primaryKey().references('repositories.id').onDelete('cascade'))
    .addColumn('quarantining_enabled', 'integer', (c) => c.notNull())
    .addColumn('auto_quarantine_flaky', 'integer', (c) => c.notNull())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('ticket_url_template', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('upload_key', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('commit_sha', 'text', (c) => c.notNull())
    .addColumn('pr_number', 'integer')
    .addColumn('job_name', 'text')
    .addColumn('job_url', 'text')
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('uploads_key')
    .on('uploads')
    .columns(['repo_id', 'upload_key'])
    .unique()
    .execute();

  await db.schema
    .createTable('test_cases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('parent', 'text')
    .addColumn('classname', 'text')
    .addColumn('file', 'text')
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('codeowners', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_reason', 'text', (c) => c.notNull())
    .addColumn('status_at', 'bigint', (c) => c.notNull())
    .addColumn('monitors', 'text', (c) => c.notNull())
    .addColumn('has_active_monitor', 'integer', (c) => c.notNull())
    .addColumn('manual_flag', 'text')
    .addColumn('quarantine_override', 'text', (c) => c.notNull())
    .addColumn('quarantined', 'integer', (c) => c.notNull())
    .addColumn('quarantine_setting', 'text')
    .addColumn('quarantined_at', 'bigint')
    .addColumn('ticket_id', 'text')
    .addColumn('ticket_url', 'text')
    .addColumn('first_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('prs_impacted_7d', 'integer', (c) => c.notNull())
    .addColumn('rollup_at', 'bigint', (c) => c.notNull())
    .execute();
  // list-unhealthy-tests: status filter, then Trunk's default order (PRs impacted desc, name, id).
  await sql`create index test_cases_unhealthy on test_cases (repo_id, status, prs_impacted_7d desc, name, id)`.execute(
    db,
  );
  await sql`create index test_cases_quarantined on test_cases (repo_id, quarantined, name, id)`.execute(db);
  // The periodic pass visits only tests with something to resolve.
  await sql`create index test_cases_active on test_cases (has_active_monitor, repo_id)`.execute(db);

  await db.schema
    .createTable('test_results')
    .addColumn('id', serialType(db), (c) => c.primaryKey())
    .addColumn('repo_id', 'text', (c) => c.notNull())
    .addColumn('test_case_id', 'text', (c) => c.notNull().references('test_cases.id').onDelete('cascade'))
    .addColumn('upload_id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('commit_sha', 'text', (c) => c.notNull())
    .addColumn('pr_number', 'integer')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('retry_index', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'integer')
    .addColumn('failure_fingerprint', 'text')
    .addColumn('failure_summary', 'text')
    .addColumn('failure_text', 'text')
    .addColumn('quarantined', 'integer', (c) => c.notNull())
    .execute();
  await sql`create index test_results_case_at on test_results (test_case_id, at)`.execute(db);
  await sql`create index test_results_case_commit on test_results (test_case_id, commit_sha)`.execute(db);
  // list-failing-tests scans a time window of failures only.
  await sql`create index test_results_failures on test_results (repo_id, at, test_case_id) where outcome = 'failed'`.execute(
    db,
  );

  await db.schema
    .createTable('test_case_events')
    .addColumn('id', serialType(db), (c) => c.primaryKey())
    .addColumn('test_case_id', 'text', (c) => c.notNull().references('test_cases.id').onDelete('cascade'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await sql`create index test_case_events_case on test_case_events (test_case_id, kind, at)`.execute(db);

  await db.schema
    .createTable('list_snapshots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('query_hash', 'text', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create index list_snapshots_reuse on list_snapshots (query_hash, version, created_at)`.execute(
    db,
  );
  await db.schema
    .createTable('list_snapshot_rows')
    .addColumn('snapshot_id', 'text', (c) => c.notNull().references('list_snapshots.id').onDelete('cascade'))
    .addColumn('pos', 'integer', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('list_snapshot_rows_pk', ['snapshot_id', 'pos'])
    .execute();

  await db.schema
    .createTable('bundle_uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .addColumn('upload_id', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'bundle_uploads',
    'list_snapshot_rows',
    'list_snapshots',
    'test_case_events',
    'test_results',
    'test_cases',
    'uploads',
    'repo_settings',
  ]) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable('repositories').dropColumn('health_version').execute();
}
