import type { Selectable, Updateable } from 'kysely';
import { insertMany, keyChunks, type Queryable, updateMany, yieldToEventLoop } from '../../db/bulk.ts';
import type { TestCasesTable } from '../schema.ts';
import { reserveTestOrdinals, writeTestHealth } from '../tenancy/repos.ts';
import { addOwners, bumpOwnersVersion, replaceOwners } from './owners.ts';

export type TestCaseRow = Selectable<TestCasesTable>;

/** What ingestion needs of each test it touches (the rest is read only for the few it re-evaluates). */
export const SEEN_COLUMNS = [
  'id',
  'repo_id',
  'ordinal',
  'status',
  'quarantined',
  'has_active_monitor',
  'manual_flag',
  'last_seen_at',
  'codeowners',
] as const;
export type SeenTestCase = Readonly<Pick<TestCaseRow, (typeof SEEN_COLUMNS)[number]>>;

/**
 * The seen columns of a full row (a new test's), without the rest: a literal (one per new test of an
 * upload), where a loop over SEEN_COLUMNS stored each column through a generic keyed store.
 */
export function seenOf(r: TestCaseRow): SeenTestCase {
  return {
    id: r.id,
    repo_id: r.repo_id,
    ordinal: r.ordinal,
    status: r.status,
    quarantined: r.quarantined,
    has_active_monitor: r.has_active_monitor,
    manual_flag: r.manual_flag,
    last_seen_at: r.last_seen_at,
    codeowners: r.codeowners,
  };
}

/**
 * A new test's row before it has its ordinal (upsertTestCases writes it in: a row built with a
 * placeholder one keeps its shape).
 */
export type NewTestCase = Omit<TestCaseRow, 'ordinal'> & { ordinal?: number };

/** A test's last_seen_at is moved forward only when it is older than this (saves a row write per test per upload). */
export const SEEN_PRECISION_MS = 3_600_000;

/** The tests of one upload that ingestion did not know, for `upsertTestCases`. */
export interface UploadTests {
  readonly repoId: string;
  /** Distinct test ids. */
  readonly ids: readonly string[];
  /**
   * The row to insert for a test that does not exist yet, a new object each call: its ordinal is
   * handed out (written into it) here.
   */
  readonly build: (id: string) => NewTestCase;
}

/** What `upsertTestCases` returns. */
export interface UpsertedTests {
  /** Each id's row, in the order of `ids` (undefined: the id belongs to another repository). */
  readonly byIndex: (SeenTestCase | undefined)[];
}

/** Moves the tests' last_seen_at to `now` (ingestion does so when it is over SEEN_PRECISION_MS old). */
export function markSeen(db: Queryable, repoId: string, now: number, ids: readonly string[]): Promise<void> {
  return writeTestHealth(db, repoId, async () => {
    for (const part of keyChunks(db, ids)) {
      await db.updateTable('test_cases').set({ last_seen_at: now }).where('id', 'in', part).execute();
    }
    return { changed: ids.length > 0, value: undefined };
  });
}

/** Replaces tests' owners: ids by their new owners (JSON), and their rows of the owner index. */
export function setOwners(
  db: Queryable,
  repoId: string,
  changed: ReadonlyMap<string, readonly string[]>,
): Promise<void> {
  return writeTestHealth(db, repoId, async () => {
    for (const [codeowners, ids] of changed) {
      await replaceOwners(db, repoId, codeowners, ids);
      for (const part of keyChunks(db, ids)) {
        await db.updateTable('test_cases').set({ codeowners }).where('id', 'in', part).execute();
      }
    }
    if (changed.size > 0) await bumpOwnersVersion(db, repoId);
    return { changed: changed.size > 0, value: undefined };
  });
}

/**
 * Stores tests an upload did not know and returns their rows as stored: looks them up by primary key
 * and inserts the new ones. An id that belongs to another repository is left untouched and not
 * returned: the caller re-derives those ids. (Seeing a found test again is the caller's: markSeen,
 * setOwners.)
 */
export function upsertTestCases(db: Queryable, tests: UploadTests): Promise<UpsertedTests> {
  return writeTestHealth(db, tests.repoId, () => upsert(db, tests));
}

async function upsert(
  db: Queryable,
  tests: UploadTests,
  lookUpFirst?: boolean,
): Promise<{ changed: boolean; value: UpsertedTests }> {
  const { repoId } = tests;
  const byIndex: (SeenTestCase | undefined)[] = new Array(tests.ids.length);
  /** Where each id is in `ids`. */
  const indexOf = new Map<string, number>();
  for (let i = 0; i < tests.ids.length; i++) indexOf.set(tests.ids[i] as string, i);
  const found = new Set<string>();
  const lookUp = async (ids: readonly string[]) => {
    for (const part of keyChunks(db, ids)) {
      for (const r of await db
        .selectFrom('test_cases')
        .select(SEEN_COLUMNS)
        .where('id', 'in', part)
        .execute()) {
        found.add(r.id);
        if (r.repo_id === repoId) byIndex[indexOf.get(r.id) as number] = r;
      }
      await yieldToEventLoop();
    }
  };
  // A repository without tests yet (its first upload, the costliest one: every test new) skips the
  // lookup: none of the ids can be its own. Else in key order, chunk after chunk: each statement's
  // lookups walk on through the primary key's B-tree instead of jumping across it.
  const unread = lookUpFirst !== true && (await storedTestOrdinals(db, repoId)) === 0;
  if (!unread) await lookUp([...tests.ids].sort());
  // New rows go in by name: two of the table's indexes (unhealthy and quarantined lists) are ordered
  // by name within a repository and status, one (the primary key) by id; in name order two of the
  // three grow at their end instead of all over.
  const named = tests.ids
    .filter((id) => !found.has(id))
    .map(tests.build)
    .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  // Ordinals in the same order: the (repository, ordinal) index grows at its end too.
  const first = named.length === 0 ? 0 : await reserveTestOrdinals(db, repoId, named.length);
  // (Written into the rows just built, instead of a copy of each with its ordinal.)
  for (let i = 0; i < named.length; i++) (named[i] as TestCaseRow).ordinal = first + i;
  const fresh = named as readonly TestCaseRow[];
  const inserted = await insertMany(db, 'test_cases', fresh, { ignoreConflicts: true });
  if (inserted === fresh.length) {
    for (const r of fresh) byIndex[indexOf.get(r.id) as number] = seenOf(r);
    await addOwners(db, fresh);
  } else if (unread) {
    // Ids another repository holds (custom ids), not looked up: every row the repository has is one
    // just inserted, so removing them and its ordinals leaves it as it was, and the usual way (look
    // up, then insert) numbers its tests without the gaps the skipped rows would leave.
    await db.deleteFrom('test_cases').where('repo_id', '=', repoId).execute();
    await db.updateTable('repositories').set({ test_ordinals: 0 }).where('id', '=', repoId).execute();
    return upsert(db, tests, true);
  } else {
    // Some ids were taken since the lookup (by another repository's custom ids): read them all back;
    // those of other repositories are skipped. The rows inserted here are those with our ordinal.
    await lookUp(fresh.map((r) => r.id));
    await addOwners(
      db,
      fresh.filter((r) => byIndex[indexOf.get(r.id) as number]?.ordinal === r.ordinal),
    );
  }
  return { changed: inserted > 0, value: { byIndex } };
}

/**
 * How many test ordinals the repository has handed out (0: it has no tests). Exact under its health
 * lock, which every writer of its tests holds.
 */
async function storedTestOrdinals(db: Queryable, repoId: string): Promise<number> {
  const row = await db
    .selectFrom('repositories')
    .select('test_ordinals')
    .where('id', '=', repoId)
    .executeTakeFirst();
  return Number(row?.test_ordinals ?? 0);
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
  for (const part of keyChunks(db, ids)) {
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

/** Writes each of the repository's tests' patch (tests without one are left alone). */
export function updateTestCases(
  db: Queryable,
  repoId: string,
  patches: readonly { id: string; patch: Updateable<TestCasesTable> }[],
): Promise<void> {
  return writeTestHealth(db, repoId, async () => {
    const values = patches.map((p) => ({ key: p.id, values: p.patch }));
    await updateMany(db, 'test_cases', 'id', values);
    return { changed: patches.length > 0, value: undefined };
  });
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
