import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * The code owners of each test, one row per (test, owner), kept beside `test_cases.codeowners` (a
 * JSON array) wherever that is written (store/tests/cases.ts, in the same transaction): the
 * dashboard's owner filter (all tests, unhealthy tests) read every test row of the repository and
 * matched the JSON with LIKE. Keyed (repo_id, owner, name, test_id): an owner's tests are one range,
 * in the all-tests list's order (name, then id), so its count and a page are reads of that range, and
 * whether a listed test has an owner is one key lookup. The test's ordinal rides along (PostgreSQL:
 * INCLUDE; SQLite: WITHOUT ROWID, the key is the table) for the search texts kept in memory. Filled
 * here from the stored rows (an owner named twice in one array counts once).
 * `repositories.owners_version` is raised whenever known tests' owners change (new tests raise
 * test_ordinals): with it, an owner's tests kept in memory are known to be current.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  // Engines differ: PostgreSQL has INCLUDE (a covering key) and SQLite a clustered table.
  await sql`create table test_owners (
    repo_id text not null,
    owner text not null,
    name text not null,
    test_id text not null,
    ordinal integer not null,
    primary key (repo_id, owner, name, test_id)${pg ? sql` include (ordinal)` : sql``}
  )${pg ? sql`` : sql` without rowid`}`.execute(db);
  await sql`alter table repositories add column owners_version integer not null default 0`.execute(db);
  // Engines differ in how a JSON array becomes rows.
  const elements = pg
    ? sql`cross join lateral jsonb_array_elements_text(t.codeowners::jsonb) as j(value)`
    : sql`cross join json_each(t.codeowners) as j`;
  await sql`insert into test_owners (repo_id, owner, name, test_id, ordinal)
    select distinct t.repo_id, j.value, t.name, t.id, t.ordinal from test_cases t ${elements}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table test_owners`.execute(db);
  await sql`alter table repositories drop column owners_version`.execute(db);
}
