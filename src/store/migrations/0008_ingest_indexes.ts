import { type Kysely, sql } from 'kysely';

/**
 * Cheaper ingestion. An upload's result rows share their upload id, so an index led by it grows in one
 * place instead of at 100k random places (as `(test_case_id, commit_sha)` did); attempts on a commit are
 * found through the uploads of that commit. Failed attempts by commit find the tests an upload must
 * re-evaluate (pass-on-retry across jobs) without reading the passes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_results_case_commit`.execute(db);
  await sql`create index test_results_upload on test_results (upload_id, test_case_id)`.execute(db);
  await sql`create index uploads_commit on uploads (repo_id, commit_sha)`.execute(db);
  await sql`create index test_results_commit_failures on test_results (repo_id, commit_sha, test_case_id) where outcome = 'failed'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_results_commit_failures`.execute(db);
  await sql`drop index uploads_commit`.execute(db);
  await sql`drop index test_results_upload`.execute(db);
  await sql`create index test_results_case_commit on test_results (test_case_id, commit_sha)`.execute(db);
}
