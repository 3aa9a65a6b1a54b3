import { type Kysely, sql } from 'kysely';

/** Finished PR submissions and test runs taken out of a queue's live state, for reads of its history. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('queue_archive')
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('pr_number', 'integer')
    .addColumn('state', 'text')
    .addColumn('seq', 'integer')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('archived_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('queue_archive_pk', ['queue_id', 'kind', 'key'])
    .execute();
  await sql`create index queue_archive_pr on queue_archive (queue_id, kind, pr_number, seq)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('queue_archive').execute();
}
