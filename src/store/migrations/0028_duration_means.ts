import { type Kysely, sql } from 'kysely';

/**
 * Durations from precomputed rows (docs/dashboard.md, "Durations"), written in the ingest transaction:
 * - `test_duration_means`: per test, its timed attempts of the week (Monday 00:00 UTC) of its latest
 *   timed attempt and of the week before, and their mean, with an index ordered by that mean, so the
 *   slowest tests are the first rows of one index range instead of a sum over every test's hours;
 * - `repo_time_days`: per repository and UTC day, the summed duration and count of timed attempts, and
 *   the failed attempts of tests that passed on a retry in the same upload, with their durations.
 * Filled here from the hourly rollups for the current and the previous week (means) and every day
 * (summed time); the retried failures count from this migration on.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('test_duration_means')
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    // Week index: floor((UTC day + 3) / 7), weeks starting on Monday.
    .addColumn('week', 'integer', (c) => c.notNull())
    .addColumn('cur_sum_ms', 'bigint', (c) => c.notNull())
    .addColumn('cur_count', 'integer', (c) => c.notNull())
    .addColumn('prev_sum_ms', 'bigint', (c) => c.notNull())
    .addColumn('prev_count', 'integer', (c) => c.notNull())
    // Null when neither week holds a timed attempt (after retention took them out).
    .addColumn('mean_ms', 'double precision')
    .addPrimaryKeyConstraint('test_duration_means_pk', ['repo_id', 'ordinal'])
    .execute();
  await sql`create index test_duration_means_slowest
    on test_duration_means (repo_id, mean_ms desc, ordinal, week)`.execute(db);
  await db.schema
    .createTable('repo_time_days')
    .addColumn('repo_id', 'text', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    // UTC day index: floor(epoch ms / 86,400,000).
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('test_ms', 'bigint', (c) => c.notNull())
    .addColumn('timed', 'integer', (c) => c.notNull())
    .addColumn('retried_failures', 'integer', (c) => c.notNull())
    .addColumn('retried_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('repo_time_days_pk', ['repo_id', 'day'])
    .execute();

  const week = Math.floor((Math.floor(Date.now() / 86_400_000) + 3) / 7);
  const weekStartHour = (week * 7 - 3) * 24;
  await sql`insert into test_duration_means
      (repo_id, ordinal, week, cur_sum_ms, cur_count, prev_sum_ms, prev_count, mean_ms)
    select repo_id, ordinal, ${week},
      sum(case when hour >= ${weekStartHour} then duration_sum_ms else 0 end),
      sum(case when hour >= ${weekStartHour} then duration_count else 0 end),
      sum(case when hour < ${weekStartHour} then duration_sum_ms else 0 end),
      sum(case when hour < ${weekStartHour} then duration_count else 0 end),
      sum(duration_sum_ms) * 1.0 / sum(duration_count)
    from test_run_hours
    where hour >= ${weekStartHour - 7 * 24} and hour < ${weekStartHour + 7 * 24} and duration_count > 0
    group by repo_id, ordinal`.execute(db);
  await sql`insert into repo_time_days (repo_id, day, test_ms, timed, retried_failures, retried_ms)
    select repo_id, hour / 24, sum(duration_sum_ms), sum(duration_count), 0, 0
    from test_run_hours
    where duration_count > 0
    group by repo_id, hour / 24`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('repo_time_days').execute();
  await db.schema.dropTable('test_duration_means').execute();
}
