import { type Kysely, sql } from 'kysely';

/**
 * Two indexes of `test_results` go, each kept up by every result row an upload inserts:
 * - `test_results_text` (by failure text hash: random keys, so a costly part of inserting an upload's
 *   results; docs/benchmarks.md) served only retention, to find the texts no result refers to.
 *   A text now records when an upload last used it (`failure_texts.last_used_at`, moved at most daily),
 *   and retention deletes the texts last used before every upload it keeps. Texts stored before this
 *   migration count as used now.
 * - `test_results_commit_failures` (failures by commit) served only the search for a commit's earlier
 *   failures, which now goes through the commit's uploads (`uploads_commit`) and `test_results_upload`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const now = Date.now();
  await sql`alter table failure_texts add column last_used_at bigint not null default 0`.execute(db);
  await sql`update failure_texts set last_used_at = ${now}`.execute(db);
  await sql`create index failure_texts_used on failure_texts (last_used_at)`.execute(db);
  // Ingestion looks texts up by hash for their last use: from this index alone, not the rows (texts
  // of a few KB each). Both indexes change only when a text is stored or marked used (daily).
  await sql`create index failure_texts_hash_used on failure_texts (hash, last_used_at)`.execute(db);
  await sql`drop index test_results_text`.execute(db);
  await sql`drop index test_results_commit_failures`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index test_results_commit_failures on test_results (repo_id, commit_sha, test_case_id) where outcome = 'failed'`.execute(
    db,
  );
  await sql`create index test_results_text on test_results (failure_text_hash)`.execute(db);
  await sql`drop index failure_texts_hash_used`.execute(db);
  await sql`drop index failure_texts_used`.execute(db);
  await sql`alter table failure_texts drop column last_used_at`.execute(db);
}
