import { type Kysely, sql } from 'kysely';

/**
 * `test_cases_unhealthy` becomes partial (`status <> 'HEALTHY'`), same columns: its readers (the
 * unhealthy lists and counts: store/tests/lists.ts, store/dashboard/repo-days.ts) only ask for FLAKY
 * or BROKEN tests, and say `status <> 'HEALTHY'` in so many words (SQLite uses a partial index only
 * for a query that repeats its condition). A new test (HEALTHY) no longer adds an entry to it: one
 * B-tree fewer of the four a first upload's tests are inserted into.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_cases_unhealthy`.execute(db);
  await sql`create index test_cases_unhealthy on test_cases (repo_id, status, prs_impacted_7d desc, name, id)
    where status <> 'HEALTHY'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_cases_unhealthy`.execute(db);
  await sql`create index test_cases_unhealthy on test_cases (repo_id, status, prs_impacted_7d desc, name, id)`.execute(
    db,
  );
}
