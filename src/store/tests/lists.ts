import { sql } from 'kysely';
import { chunked, type Queryable } from '../../db/bulk.ts';
import { failingInWindow } from '../uploads/rollups.ts';
import type { TestCaseRow } from './cases.ts';

/** Trunk's default order of unhealthy tests: PRs impacted (most first), then name, then id. */
const UNHEALTHY_ORDER = sql`prs_impacted_7d desc, name, id`;

/**
 * The condition of the partial index test_cases_unhealthy (migration 0037), repeated word for word:
 * SQLite uses a partial index only for a query that says so (a bound 'HEALTHY' would not do).
 */
export const NOT_HEALTHY = sql<boolean>`status <> 'HEALTHY'`;

/** The columns of a test case that the unhealthy and detailed records show; a page reads only these. */
export const RECORD_COLUMNS = [
  'id',
  'name',
  'variant',
  'status',
  'status_reason',
  'status_at',
  'file',
  'parent',
  'classname',
  'codeowners',
  'prs_impacted_7d',
  'quarantined',
  'ticket_url',
  // Not shown: where the test's rollups are (store/uploads/rollups.ts).
  'ordinal',
] as const;
export type RecordRow = Pick<TestCaseRow, (typeof RECORD_COLUMNS)[number]>;

/** RECORD_COLUMNS of the test_cases table aliased `t`, for joins. */
const RECORD_COLUMNS_OF_T = RECORD_COLUMNS.map((c) => `t.${c}` as const);

export async function countByStatus(db: Queryable, repoId: string, status: string): Promise<number> {
  const row = await db
    .selectFrom('test_cases')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('repo_id', '=', repoId)
    .where('status', '=', status)
    .where(NOT_HEALTHY)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function firstByStatus(
  db: Queryable,
  repoId: string,
  status: string,
  limit: number,
): Promise<RecordRow[]> {
  return db
    .selectFrom('test_cases')
    .select(RECORD_COLUMNS)
    .where('repo_id', '=', repoId)
    .where('status', '=', status)
    .where(NOT_HEALTHY)
    .orderBy('prs_impacted_7d', 'desc')
    .orderBy('name')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Freezes the order of a repository's tests with a status into snapshot rows. */
export async function fillByStatus(
  db: Queryable,
  snapshotId: string,
  repoId: string,
  status: string,
): Promise<void> {
  await sql`insert into list_snapshot_rows (snapshot_id, pos, item_id)
    select ${snapshotId}, row_number() over (order by ${UNHEALTHY_ORDER}), id
    from test_cases where repo_id = ${repoId} and status = ${status} and ${NOT_HEALTHY}`.execute(db);
}

export function testCasesByIds(db: Queryable, ids: readonly string[]): Promise<RecordRow[]> {
  return Promise.all(
    chunked(ids).map((part) =>
      db.selectFrom('test_cases').select(RECORD_COLUMNS).where('id', 'in', part).execute(),
    ),
  ).then((parts) => parts.flat());
}

/**
 * The test cases at positions from..to (1-based, inclusive) of a list snapshot, in snapshot order:
 * one join on both primary keys. A test case deleted since the snapshot was taken is skipped.
 */
export function snapshotTestCases(
  db: Queryable,
  snapshotId: string,
  from: number,
  to: number,
): Promise<RecordRow[]> {
  return db
    .selectFrom('list_snapshot_rows as s')
    .innerJoin('test_cases as t', 't.id', 's.item_id')
    .select(RECORD_COLUMNS_OF_T)
    .where('s.snapshot_id', '=', snapshotId)
    .where('s.pos', '>=', from)
    .where('s.pos', '<=', to)
    .orderBy('s.pos')
    .execute();
}

/** The sort key of the quarantined list. */
export interface NameKey {
  readonly name: string;
  readonly id: string;
}

export async function countQuarantined(db: Queryable, repoId: string): Promise<number> {
  const row = await db
    .selectFrom('test_cases')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('repo_id', '=', repoId)
    .where('quarantined', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Quarantined tests by (name, id), strictly after or before a key, ascending or descending. Keyset. */
export function listQuarantined(
  db: Queryable,
  repoId: string,
  cursor: { after?: NameKey | undefined } | { before?: NameKey | undefined },
  limit: number,
): Promise<TestCaseRow[]> {
  const descending = 'before' in cursor;
  const key = 'before' in cursor ? cursor.before : 'after' in cursor ? cursor.after : undefined;
  let query = db
    .selectFrom('test_cases')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('quarantined', '=', 1);
  if (key !== undefined) {
    query = query.where((eb) =>
      eb(eb.refTuple('name', 'id'), descending ? '<' : '>', eb.tuple(key.name, key.id)),
    );
  }
  const order = descending ? 'desc' : 'asc';
  return query.orderBy('name', order).orderBy('id', order).limit(limit).execute();
}

/**
 * Tests with a failure in the hours overlapping [start, end), and their failures: from the failure
 * rollups (store/uploads/rollups.ts), never the results.
 */
const FAILING = failingInWindow;

export async function countFailing(
  db: Queryable,
  repoId: string,
  start: number,
  end: number,
): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*) as n from (${FAILING(repoId, start, end)}) f`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

export async function firstFailing(
  db: Queryable,
  repoId: string,
  start: number,
  end: number,
  limit: number,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select id from (${FAILING(repoId, start, end)}) f
    order by failures desc, name, id limit ${limit}`.execute(db);
  return rows.map((r) => r.id);
}

export async function fillFailing(
  db: Queryable,
  snapshotId: string,
  repoId: string,
  start: number,
  end: number,
): Promise<void> {
  await sql`insert into list_snapshot_rows (snapshot_id, pos, item_id)
    select ${snapshotId}, row_number() over (order by failures desc, name, id), id
    from (${FAILING(repoId, start, end)}) f`.execute(db);
}

/**
 * Ids of a repository's quarantined tests, by name then id (one index-only walk of
 * test_cases_quarantined); the first `limit`, or all of them.
 */
export async function quarantinedIds(db: Queryable, repoId: string, limit?: number): Promise<string[]> {
  const query = db
    .selectFrom('test_cases')
    .select('id')
    .where('repo_id', '=', repoId)
    .where('quarantined', '=', 1)
    .orderBy('name')
    .orderBy('id');
  const rows = await (limit === undefined ? query : query.limit(limit)).execute();
  return rows.map((r) => r.id);
}
