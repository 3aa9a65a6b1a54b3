import { type Kysely, sql } from 'kysely';

/**
 * GitHub: webhook deliveries stored before they are acknowledged (processed afterwards, so a crash
 * loses none; the delivery id de-duplicates GitHub's redeliveries), and the draft pull requests
 * opened for test branches (createPrsForTestingBranches), closed when their run ends.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('github_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('processed_at', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('outcome', 'text')
    .execute();
  await sql`create index github_deliveries_pending on github_deliveries (processed_at, received_at)`.execute(
    db,
  );
  await db.schema
    .createTable('github_test_prs')
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('test_branch', 'text', (c) => c.notNull())
    .addColumn('pr_number', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('github_test_prs_pk', ['repo_id', 'test_branch'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('github_test_prs').execute();
  await db.schema.dropTable('github_deliveries').execute();
}
