import { type Insertable, type Selectable, sql } from 'kysely';
import { chunked, type Queryable } from '../../db/bulk.ts';
import type { DashboardRepoDaysTable } from '../schema.ts';
import { NOT_HEALTHY } from '../tests/lists.ts';

/** The dashboard's reads (and its one cache table). Every query here is indexed; see docs/dashboard.md. */

export const DAY_MS = 86_400_000;

export type RepoDayRow = Selectable<DashboardRepoDaysTable>;

/** The daily figures of these repositories from `fromDay` on. */
export function repoDays(db: Queryable, repoIds: readonly string[], fromDay: number): Promise<RepoDayRow[]> {
  if (repoIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('dashboard_repo_days')
    .selectAll()
    .where('repo_id', 'in', [...repoIds])
    .where('day', '>=', fromDay)
    .execute();
}

export async function saveRepoDays(db: Queryable, rows: readonly Insertable<DashboardRepoDaysTable>[]) {
  for (const part of chunked(rows, 100)) {
    await db
      .insertInto('dashboard_repo_days')
      .values(part)
      .onConflict((oc) =>
        oc.columns(['repo_id', 'day']).doUpdateSet((eb) => ({
          flaky: eb.ref('excluded.flaky'),
          broken: eb.ref('excluded.broken'),
          quarantined: eb.ref('excluded.quarantined'),
          uploads: eb.ref('excluded.uploads'),
          tests: eb.ref('excluded.tests'),
          computed_at: eb.ref('excluded.computed_at'),
        })),
      )
      .execute();
  }
}

export interface HealthCounts {
  flaky: number;
  broken: number;
  quarantined: number;
}

/** FLAKY, BROKEN and quarantined tests of a repository now (index-only counts). */
export async function healthCounts(db: Queryable, repoId: string): Promise<HealthCounts> {
  const byStatus = await db
    .selectFrom('test_cases')
    .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
    .where('repo_id', '=', repoId)
    .where('status', 'in', ['FLAKY', 'BROKEN'])
    .where(NOT_HEALTHY)
    .groupBy('status')
    .execute();
  const q = await db
    .selectFrom('test_cases')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('repo_id', '=', repoId)
    .where('quarantined', '=', 1)
    .executeTakeFirstOrThrow();
  const of = (s: string) => Number(byStatus.find((r) => r.status === s)?.n ?? 0);
  return { flaky: of('FLAKY'), broken: of('BROKEN'), quarantined: Number(q.n) };
}

/** Tests tracked in a repository (an index scan of its tests: the overview caches it per day). */
export async function countTestCases(db: Queryable, repoId: string): Promise<number> {
  const row = await db
    .selectFrom('test_cases')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('repo_id', '=', repoId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface TransitionRow {
  kind: string;
  at: number;
  data: string;
}

/**
 * Status and quarantine changes of a repository's tests at or after `since`. The events are read by
 * the (kind, at) index and joined to their test by primary key; CROSS JOIN keeps SQLite from
 * starting at the repository's 200k tests instead (PostgreSQL plans it freely).
 */
export async function transitionsSince(
  db: Queryable,
  repoId: string,
  since: number,
): Promise<TransitionRow[]> {
  const { rows } = await sql<TransitionRow>`select e.kind as kind, e.at as at, e.data as data
    from test_case_events e cross join test_cases t
    where e.kind in ('status', 'quarantine') and e.at >= ${since}
      and t.id = e.test_case_id and t.repo_id = ${repoId}`.execute(db);
  return rows.map((r) => ({ kind: r.kind, at: Number(r.at), data: r.data }));
}

/**
 * Uploads per UTC day from `fromDay` (a day start) on: day index (0 = fromDay) → count. (better-sqlite3
 * binds numbers as REAL, hence the cast: the division must truncate on both engines.)
 */
export async function uploadsPerDay(
  db: Queryable,
  repoId: string,
  fromDay: number,
): Promise<Map<number, number>> {
  const { rows } = await sql<{
    d: number;
    n: number;
  }>`select cast((created_at - ${fromDay}) / ${DAY_MS} as integer) as d,
      count(*) as n
    from uploads where repo_id = ${repoId} and created_at >= ${fromDay}
    group by 1`.execute(db);
  return new Map(rows.map((r) => [Number(r.d), Number(r.n)]));
}

export async function lastUploadAt(db: Queryable, repoId: string): Promise<number | null> {
  const row = await db
    .selectFrom('uploads')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('repo_id', '=', repoId)
    .executeTakeFirst();
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}

/** Which tests a list shows. */
export interface TestFilter {
  readonly show: 'unhealthy' | 'flaky' | 'broken' | 'quarantined';
  /** Part of the name, any case. */
  readonly search: string;
  /** One code owner, exactly as CODEOWNERS names it. */
  readonly owner: string;
}

export type TestSort = 'prs' | 'name' | 'changed';

/** `%text%` for LIKE … ESCAPE '\', with the wildcards of the text itself escaped. */
function contains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filtered(db: Queryable, repoId: string, f: TestFilter) {
  let query = db.selectFrom('test_cases').where('repo_id', '=', repoId);
  if (f.show === 'quarantined') query = query.where('quarantined', '=', 1);
  else if (f.show === 'flaky') query = query.where('status', '=', 'FLAKY');
  else if (f.show === 'broken') query = query.where('status', '=', 'BROKEN');
  else query = query.where('status', 'in', ['FLAKY', 'BROKEN']);
  // The unhealthy lists' index holds only these (migration 0037), and is used when this is said.
  if (f.show !== 'quarantined') query = query.where(NOT_HEALTHY);
  if (f.search !== '') {
    query = query.where(sql<boolean>`lower(name) like ${contains(f.search.toLowerCase())} escape '\\'`);
  }
  if (f.owner !== '') {
    // One key lookup in the owner index (test_owners) per candidate: its key holds the name and id
    // the candidate's index row already has.
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('test_owners as o')
          .select('o.ordinal')
          .where('o.repo_id', '=', repoId)
          .where('o.owner', '=', f.owner)
          .whereRef('o.name', '=', 'test_cases.name')
          .whereRef('o.test_id', '=', 'test_cases.id'),
      ),
    );
  }
  return query;
}

/** The columns a list row shows. */
export type TestListRow = Awaited<ReturnType<typeof listRows>>[number];

/** The list rows of these tests, in the order of `ids`. */
export async function listRows(db: Queryable, ids: readonly string[]) {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('test_cases')
    .select([
      'id',
      'name',
      'parent',
      'classname',
      'file',
      'variant',
      'status',
      'status_reason',
      'status_at',
      'codeowners',
      'quarantined',
      'quarantine_override',
      'prs_impacted_7d',
      'ticket_url',
      'last_seen_at',
    ])
    .where('id', 'in', [...ids])
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/**
 * Ids of a filtered list in its order, read from the covering index
 * (repo_id, status, prs_impacted_7d desc, name, id) (the code-owner filter looks each candidate up in
 * the owner index by that name and id); all of them when no limit is given.
 */
export async function listIds(
  db: Queryable,
  repoId: string,
  f: TestFilter,
  sort: TestSort,
  page?: { limit: number; offset: number },
): Promise<string[]> {
  let query = filtered(db, repoId, f).select('id');
  if (sort === 'name') query = query.orderBy('name').orderBy('id');
  else if (sort === 'changed') query = query.orderBy('status_at', 'desc').orderBy('id');
  else query = query.orderBy('prs_impacted_7d', 'desc').orderBy('name').orderBy('id');
  if (page !== undefined) query = query.limit(page.limit).offset(page.offset);
  return (await query.execute()).map((r) => r.id);
}

export interface FailureSampleRow {
  at: number;
  branch: string;
  commit_sha: string;
  pr_number: number | null;
  failure_text: string | null;
  failure_summary: string | null;
  quarantined: number;
}

/** The latest failures of one test with one fingerprint (null: failures without one). */
export async function recentFailures(
  db: Queryable,
  testId: string,
  fingerprint: string | null,
  since: number,
  limit: number,
): Promise<FailureSampleRow[]> {
  let query = db
    .selectFrom('test_results as r')
    .leftJoin('failure_texts as t', 't.hash', 'r.failure_text_hash')
    .select([
      'r.at',
      'r.branch',
      'r.commit_sha',
      'r.pr_number',
      't.text as failure_text',
      'r.failure_summary',
      'r.quarantined',
    ])
    .where('r.test_case_id', '=', testId)
    .where('r.at', '>=', since)
    .where('r.outcome', '=', 'failed');
  query =
    fingerprint === null || fingerprint === ''
      ? query.where('r.failure_fingerprint', 'is', null)
      : query.where('r.failure_fingerprint', '=', fingerprint);
  const rows = await query.orderBy('r.at', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...r, at: Number(r.at) }));
}

/** A queue's most recently archived runs or PR submissions (JSON), newest first. */
export async function recentArchived(
  db: Queryable,
  queueId: string,
  kind: 'run' | 'pr',
  limit: number,
): Promise<{ data: string; archived_at: number }[]> {
  const rows = await db
    .selectFrom('queue_archive')
    .select(['data', 'archived_at'])
    .where('queue_id', '=', queueId)
    .where('kind', '=', kind)
    .orderBy('archived_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ data: r.data, archived_at: Number(r.archived_at) }));
}
