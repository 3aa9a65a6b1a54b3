import { type Kysely, sql } from 'kysely';

/**
 * Reads of one page of tests' attempt counts (get-test-details, list-failing-tests' records, the
 * dashboard's test page) ask `test_run_hours` for a few tests over a range of hours. Its key leads with
 * the hour, so each read probed every (hour, test) pair (7 days × 100 tests: 17,000 probes; PostgreSQL
 * scanned the table instead). This index leads with the test: one range per test. Key columns only,
 * so the counts' updates at ingest leave it alone (and PostgreSQL's updates stay HOT).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index test_run_hours_by_test on test_run_hours (repo_id, ordinal, hour)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_run_hours_by_test`.execute(db);
}
