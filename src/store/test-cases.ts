import type { Selectable, Updateable } from 'kysely';
import { chunked, type Queryable } from './db.ts';
import type { TestCasesTable } from './schema.ts';

export type TestCaseRow = Selectable<TestCasesTable>;

/**
 * Inserts the test cases that do not exist yet and marks the existing ones seen: one upsert per
 * chunk, returning the stored rows. `setOwners` also replaces the owners of existing tests (the upload
 * carried a CODEOWNERS file). A row whose id belongs to another repository is left untouched and not
 * returned: the caller re-derives those ids.
 */
export async function upsertTestCases(
  db: Queryable,
  rows: readonly TestCaseRow[],
  setOwners: boolean,
): Promise<TestCaseRow[]> {
  const out: TestCaseRow[] = [];
  for (const part of chunked(rows, 400)) {
    const stored = await db
      .insertInto('test_cases')
      .values(part)
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) => ({
            last_seen_at: eb.ref('excluded.last_seen_at'),
            ...(setOwners ? { codeowners: eb.ref('excluded.codeowners') } : {}),
          }))
          .whereRef('test_cases.repo_id', '=', 'excluded.repo_id'),
      )
      .returningAll()
      .execute();
    out.push(...stored);
  }
  return out;
}

/**
 * The repository's test cases with these ids. Looked up by primary key only, then filtered by
 * repository here: a filter on repo_id in SQL lets the planner prefer a repository-wide index and scan.
 */
export async function findTestCases(
  db: Queryable,
  repoId: string,
  ids: readonly string[],
): Promise<TestCaseRow[]> {
  const out: TestCaseRow[] = [];
  for (const part of chunked(ids)) {
    const rows = await db.selectFrom('test_cases').selectAll().where('id', 'in', part).execute();
    for (const r of rows) if (r.repo_id === repoId) out.push(r);
  }
  return out;
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
