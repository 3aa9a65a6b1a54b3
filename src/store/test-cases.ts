import type { Selectable, Updateable } from 'kysely';
import { chunked, type Queryable } from './db.ts';
import type { TestCasesTable } from './schema.ts';

export type TestCaseRow = Selectable<TestCasesTable>;

/** Inserts the test cases that do not exist yet; existing ones are left as they are. */
export async function insertMissingTestCases(db: Queryable, rows: readonly TestCaseRow[]): Promise<void> {
  for (const part of chunked(rows, 100)) {
    await db
      .insertInto('test_cases')
      .values(part)
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }
}

export function findTestCases(db: Queryable, repoId: string, ids: readonly string[]): Promise<TestCaseRow[]> {
  return Promise.all(
    chunked(ids).map((part) =>
      db.selectFrom('test_cases').selectAll().where('repo_id', '=', repoId).where('id', 'in', part).execute(),
    ),
  ).then((parts) => parts.flat());
}

export function findTestCase(db: Queryable, repoId: string, id: string): Promise<TestCaseRow | undefined> {
  return db
    .selectFrom('test_cases')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateTestCase(
  db: Queryable,
  id: string,
  patch: Updateable<TestCasesTable>,
): Promise<void> {
  await db.updateTable('test_cases').set(patch).where('id', '=', id).execute();
}

/** Marks tests as seen now, and sets their owners when the upload carried a CODEOWNERS file. */
export async function touchTestCases(
  db: Queryable,
  ids: readonly string[],
  at: number,
  ownersById: ReadonlyMap<string, string> | undefined,
): Promise<void> {
  if (ownersById === undefined) {
    for (const part of chunked(ids)) {
      await db.updateTable('test_cases').set({ last_seen_at: at }).where('id', 'in', part).execute();
    }
    return;
  }
  const byOwners = new Map<string, string[]>();
  for (const id of ids) {
    const owners = ownersById.get(id) ?? '[]';
    byOwners.set(owners, [...(byOwners.get(owners) ?? []), id]);
  }
  for (const [owners, group] of byOwners) {
    for (const part of chunked(group)) {
      await db
        .updateTable('test_cases')
        .set({ last_seen_at: at, codeowners: owners })
        .where('id', 'in', part)
        .execute();
    }
  }
}

/** Ids of a repository's tests with an active monitor or a manual flag: the periodic pass's work. */
export function listActiveTestIds(db: Queryable, repoId: string): Promise<{ id: string }[]> {
  return db
    .selectFrom('test_cases')
    .select('id')
    .where('has_active_monitor', '=', 1)
    .where('repo_id', '=', repoId)
    .execute();
}

/** Repositories that have tests with an active monitor. */
export function listReposWithActiveTests(db: Queryable): Promise<{ repo_id: string }[]> {
  return db
    .selectFrom('test_cases')
    .select('repo_id')
    .where('has_active_monitor', '=', 1)
    .distinct()
    .execute();
}

/** Tests whose quarantine could be anything but "not quarantined": the rest need no decision. */
export function listQuarantineCandidates(db: Queryable, repoId: string): Promise<TestCaseRow[]> {
  return db
    .selectFrom('test_cases')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where((eb) =>
      eb.or([
        eb('status', '!=', 'HEALTHY'),
        eb('quarantine_override', '!=', 'AUTO'),
        eb('quarantined', '=', 1),
      ]),
    )
    .execute();
}
