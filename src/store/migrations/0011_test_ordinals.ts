import { type Kysely, sql } from 'kysely';

/**
 * Each test gets a small integer of its own within its repository, `ordinal`: 0, 1, 2, … in the order
 * the repository first saw its tests, never reused. `repositories.test_ordinals` is how many the
 * repository has handed out (the next test's ordinal). Test ids are 36-character UUIDs; per-upload
 * sets of tests (the passes of an upload, docs/design.md "Known scaling limit") are far smaller and
 * faster to search as sorted ordinals. Existing tests are numbered by first_seen_at, then id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table test_cases add column ordinal integer not null default -1`.execute(db);
  await sql`alter table repositories add column test_ordinals integer not null default 0`.execute(db);
  await sql`update test_cases set ordinal = numbered.n
    from (select id, row_number() over (partition by repo_id order by first_seen_at, id) - 1 as n
          from test_cases) numbered
    where numbered.id = test_cases.id`.execute(db);
  await sql`update repositories set test_ordinals =
    (select count(*) from test_cases t where t.repo_id = repositories.id)`.execute(db);
  await sql`create unique index test_cases_ordinal on test_cases (repo_id, ordinal)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_cases_ordinal`.execute(db);
  await sql`alter table test_cases drop column ordinal`.execute(db);
  await sql`alter table repositories drop column test_ordinals`.execute(db);
}
