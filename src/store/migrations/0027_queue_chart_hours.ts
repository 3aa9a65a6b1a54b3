import { type Kysely, sql } from 'kysely';

/**
 * The queue page's charts (docs/dashboard.md, "Queue charts"): per queue and UTC hour, the PRs merged,
 * their times in queue, the failed runs and the flaky failures, filled on demand and final once
 * computed well after the hour ended, so a page view reads 24 rows instead of a day of archive. The
 * judgements of a window are read by time: the table's key (queue_id, run_id) would read every
 * judgement the queue ever made.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('queue_chart_hours')
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    // Start of the UTC hour, epoch ms.
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('merged', 'integer', (c) => c.notNull())
    // JSON array of the merged PRs' times in queue, in ms, ascending.
    .addColumn('waits', 'text', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('flaky', 'integer', (c) => c.notNull())
    .addColumn('computed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('queue_chart_hours_pk', ['queue_id', 'hour'])
    .execute();
  await sql`create index run_judgements_by_time on run_judgements (queue_id, at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index run_judgements_by_time`.execute(db);
  await db.schema.dropTable('queue_chart_hours').execute();
}
