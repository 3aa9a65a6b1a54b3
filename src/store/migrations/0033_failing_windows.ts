import { type Kysely, sql } from 'kysely';

/**
 * The dashboard's failing-tests page (24 hours and 7 days) kept as tables (issue 28), so that a page
 * is a range read instead of a grouping of the window's failure rollups after every upload:
 * - `failing_window_state`: per repository and window (its length in whole hours, 24 or 168) the
 *   hours [lo, hi] the rows below sum (the page's hours at some time) and how many tests they hold.
 * - `test_failing_windows`: per repository, window and test (its ordinal), the test's failures in
 *   test_failure_hours over those hours (rows with none are deleted), with its name and id, indexed
 *   in the page's order (most failures, then name, then id).
 * Kept in the ingest transaction, by retention, and moved with the clock (store/dashboard/failing.ts).
 * Filled here from the failure rollups for the current hours (`Date.now()`): the page moves them on
 * when it reads at another time.
 */
const HOUR_MS = 3_600_000;
const WINDOWS = [24, 168];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table failing_window_state (
    repo_id text not null,
    hours integer not null,
    lo integer not null,
    hi integer not null,
    tests integer not null,
    primary key (repo_id, hours)
  )`.execute(db);
  await sql`create table test_failing_windows (
    repo_id text not null,
    hours integer not null,
    ordinal integer not null,
    failures integer not null,
    name text not null,
    test_id text not null,
    primary key (repo_id, hours, ordinal)
  )`.execute(db);
  await sql`create index test_failing_windows_page
    on test_failing_windows (repo_id, hours, failures desc, name, test_id)`.execute(db);
  const now = Date.now();
  const hi = Math.floor((now + HOUR_MS - 1) / HOUR_MS);
  for (const hours of WINDOWS) {
    const lo = Math.floor(now / HOUR_MS) - hours;
    await sql`insert into test_failing_windows (repo_id, hours, ordinal, failures, name, test_id)
      select t.repo_id, ${hours}, t.ordinal, f.failures, t.name, t.id
      from (
        select repo_id, ordinal, sum(failures) as failures from test_failure_hours
        where hour >= ${lo} and hour <= ${hi}
        group by repo_id, ordinal
      ) f join test_cases t on t.repo_id = f.repo_id and t.ordinal = f.ordinal
      where f.failures > 0`.execute(db);
    await sql`insert into failing_window_state (repo_id, hours, lo, hi, tests)
      select r.id, ${hours}, ${lo}, ${hi},
        (select count(*) from test_failing_windows w where w.repo_id = r.id and w.hours = ${hours})
      from repositories r`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table test_failing_windows`.execute(db);
  await sql`drop table failing_window_state`.execute(db);
}
