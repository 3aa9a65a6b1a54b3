import { type Kysely, sql } from 'kysely';

/**
 * The dashboard's all-tests list (`…/tests`, by name, 50 a page) reads a repository's tests in name
 * order: an index on (repo_id, name, id) serves the page and its count without sorting them all.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index test_cases_by_name on test_cases (repo_id, name, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_cases_by_name`.execute(db);
}
