import type { Selectable, Updateable } from 'kysely';
import { chunked, type Queryable, yieldToEventLoop } from './db.ts';
import type { TestCasesTable } from './schema.ts';

export type TestCaseRow = Selectable<TestCasesTable>;

/** What ingestion needs of each test it touches (the rest is read only for the few it re-evaluates). */
export const SEEN_COLUMNS = [
  'id',
  'repo_id',
  'status',
  'quarantined',
  'has_active_monitor',
  'manual_flag',
  'last_seen_at',
  'codeowners',
] as const;
export type SeenTestCase = Pick<TestCaseRow, (typeof SEEN_COLUMNS)[number]>;

/** A test's last_seen_at is moved forward only when it is older than this (saves a row write per test per upload). */
export const SEEN_PRECISION_MS = 3_600_000;

/**
 * Stores an upload's tests and returns their rows: looks them up by primary key, inserts the new ones,
 * marks known ones seen (when last seen over an hour ago) and, with `setOwners`, replaces owners that
 * changed. A known test rewrites nothing in the usual case, so a repeated upload of the same suite costs
 * lookups, not writes. An id that belongs to another repository is left untouched and not returned:
 * the caller re-derives those ids.
 */
export async function upsertTestCases(
  db: Queryable,
  rows: readonly TestCaseRow[],
  setOwners: boolean,
): Promise<SeenTestCase[]> {
  const first = rows[0];
  if (first === undefined) return [];
  const { repo_id: repoId, last_seen_at: now } = first;
  const existing = new Map<string, SeenTestCase>();
  for (const part of chunked(rows.map((r) => r.id))) {
    for (const r of await db.selectFrom('test_cases').select(SEEN_COLUMNS).where('id', 'in', part).execute())
      existing.set(r.id, r);
    await yieldToEventLoop();
  }
  const out: SeenTestCase[] = [];
  const fresh = rows.filter((r) => !existing.has(r.id));
  for (const part of chunked(fresh, 400)) {
    const inserted = await db
      .insertInto('test_cases')
      .values(part)
      .onConflict((oc) => oc.column('id').doNothing())
      .returning(SEEN_COLUMNS)
      .execute();
    out.push(...inserted);
    await yieldToEventLoop();
  }
  const wanted = new Map(rows.map((r) => [r.id, r]));
  const stale: string[] = [];
  const owners = new Map<string, string[]>();
  for (const row of existing.values()) {
    if (row.repo_id !== repoId) continue;
    if (row.last_seen_at < now - SEEN_PRECISION_MS) {
      stale.push(row.id);
      row.last_seen_at = now;
    }
    const codeowners = wanted.get(row.id)?.codeowners;
    if (setOwners && codeowners !== undefined && codeowners !== row.codeowners) {
      const ids = owners.get(codeowners);
      if (ids === undefined) owners.set(codeowners, [row.id]);
      else ids.push(row.id);
      row.codeowners = codeowners;
    }
    out.push(row);
  }
  for (const part of chunked(stale)) {
    await db.updateTable('test_cases').set({ last_seen_at: now }).where('id', 'in', part).execute();
  }
  for (const [codeowners, ids] of owners) {
    for (const part of chunked(ids)) {
      await db.updateTable('test_cases').set({ codeowners }).where('id', 'in', part).execute();
    }
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
