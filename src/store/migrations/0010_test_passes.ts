import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * Passing attempts move out of `test_results` into a narrow table of their own. A large upload is
 * mostly passes; stored as full result rows (repository, branch, commit, PR, outcome, failure
 * columns, four indexes and a foreign key each) they were most of an upload's cost. A pass now keeps
 * only what no other table knows: its test, time, upload, position in the upload, retry index and
 * duration. Branch, commit and PR come from its upload. `test_results` keeps every other attempt
 * (failed and skipped), which readers union with the passes.
 *
 * The primary key leads with (test_case_id, at), the order of the windowed reads, and on SQLite the
 * table is WITHOUT ROWID so that key is the table itself (one B-tree per insert instead of two). The
 * index by upload serves per-commit and per-run reads. `seq` keeps two passes of one test in one
 * upload (two files, or retries) apart.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const clustered = isPostgres(db) ? sql`` : sql` without rowid`;
  await sql`create table test_passes (
    test_case_id text not null,
    at bigint not null,
    upload_id text not null,
    seq integer not null,
    retry_index integer not null,
    duration_ms integer,
    primary key (test_case_id, at, upload_id, seq)
  )${clustered}`.execute(db);
  await sql`create index test_passes_upload on test_passes (upload_id, test_case_id)`.execute(db);
  // Existing passes keep their result id as their position: ids grew in upload order.
  await sql`insert into test_passes (test_case_id, at, upload_id, seq, retry_index, duration_ms)
    select test_case_id, at, upload_id, id, retry_index, duration_ms from test_results where outcome = 'passed'`.execute(
    db,
  );
  await sql`delete from test_results where outcome = 'passed'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`insert into test_results (repo_id, test_case_id, upload_id, at, branch, commit_sha, pr_number, outcome,
      retry_index, duration_ms, failure_fingerprint, failure_summary, failure_text, quarantined)
    select u.repo_id, p.test_case_id, p.upload_id, p.at, u.branch, u.commit_sha, u.pr_number, 'passed',
      p.retry_index, p.duration_ms, null, null, null, 0
    from test_passes p join uploads u on u.id = p.upload_id`.execute(db);
  await sql`drop table test_passes`.execute(db);
}
