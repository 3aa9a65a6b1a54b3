import type { Kysely } from 'kysely';

/**
 * The slowest tests' means (test_duration_means, migration 0028) leave the ingest transaction (issue
 * 28): every upload changed the row of each of its tests there, on PostgreSQL a new tuple and an
 * index entry per test and upload (sustained 5,000-case reports fell 38%). An upload now only adds
 * its row here, in the ingest transaction; a later pass (store/uploads/duration-writes.ts
 * foldPendingMeans) adds the timed attempts of the uploads listed here to the means and deletes
 * their rows in one transaction, so an acknowledged upload's durations are either listed here or in
 * the means, never lost or added twice. Retention takes a listed upload's row out instead of its
 * durations; the slowest-tests read folds what is listed first.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('duration_means_pending')
    .addColumn('repo_id', 'text', (c) => c.notNull())
    .addColumn('upload_id', 'text', (c) => c.notNull().references('uploads.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('duration_means_pending_pk', ['repo_id', 'upload_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('duration_means_pending').execute();
}
