import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * PostgreSQL: result rows no longer carry a foreign key to their test. The key's check ran as a
 * trigger per inserted row, a large part of an upload's insert of its results (docs/benchmarks.md),
 * and its cascade never ran (tests are never deleted). Ingestion writes a test's row before
 * its results in the same transaction and refuses an attempt whose test it did not store (ingest.ts
 * storeTests), as the passes (migration 0012) always relied on. SQLite keeps the key: dropping it
 * would rebuild the table, and its check there is a cheap lookup in the same process.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  const { rows } = await sql<{ name: string }>`
    select conname as name from pg_constraint
    where conrelid = 'test_results'::regclass and confrelid = 'test_cases'::regclass and contype = 'f'`.execute(
    db,
  );
  for (const { name } of rows)
    await sql`alter table test_results drop constraint ${sql.id(name)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`alter table test_results add constraint test_results_test_case_id_fkey
    foreign key (test_case_id) references test_cases (id) on delete cascade`.execute(db);
}
