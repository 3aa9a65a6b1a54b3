import { type RawBuilder, sql } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';

/** The all-tests list's filter (web dashboard `…/tests`): every part optional (''). */
export interface AllTestsFilter {
  /** Part of the name, classname or file, any case. */
  readonly search: string;
  /** One code owner, exactly as CODEOWNERS names it. */
  readonly owner: string;
  /** Part of the file path, any case. */
  readonly file: string;
}

/** `%text%` for LIKE … ESCAPE '\', with the wildcards of the text itself escaped. */
function contains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The conditions of the filter's texts on test rows `t`. */
function textConditions(f: AllTestsFilter): RawBuilder<boolean>[] {
  const out: RawBuilder<boolean>[] = [];
  if (f.search !== '') {
    const like = contains(f.search.toLowerCase());
    out.push(
      sql<boolean>`(lower(t.name) like ${like} escape '\\' or lower(coalesce(t.classname, '')) like ${like} escape '\\' or lower(coalesce(t.file, '')) like ${like} escape '\\')`,
    );
  }
  if (f.file !== '') {
    out.push(sql<boolean>`lower(coalesce(t.file, '')) like ${contains(f.file.toLowerCase())} escape '\\'`);
  }
  return out;
}

/**
 * The repository's tests (never raw results) matching the filter, as `id` in the list's order (name,
 * then id). With a code owner they are that owner's range of the owner index (test_owners, already
 * in that order), each joined to its row by primary key only when a text is searched (CROSS JOIN:
 * SQLite starts from the owner's range; PostgreSQL plans it freely); without, the test rows by the
 * index (repo_id, name, id).
 */
function matching(repoId: string, f: AllTestsFilter) {
  const texts = textConditions(f);
  if (f.owner !== '') {
    const owned = sql`o.repo_id = ${repoId} and o.owner = ${f.owner}`;
    return texts.length === 0
      ? { id: sql`o.test_id`, from: sql`test_owners o`, where: owned, order: sql`o.name, o.test_id` }
      : {
          id: sql`o.test_id`,
          from: sql`test_owners o cross join test_cases t`,
          where: sql.join([owned, sql`t.id = o.test_id`, ...texts], sql` and `),
          order: sql`o.name, o.test_id`,
        };
  }
  return {
    id: sql`t.id`,
    from: sql`test_cases t`,
    where: sql.join([sql`t.repo_id = ${repoId}`, ...texts], sql` and `),
    order: sql`t.name, t.id`,
  };
}

export async function countAllTests(db: Queryable, repoId: string, f: AllTestsFilter): Promise<number> {
  const m = matching(repoId, f);
  const { rows } = await sql<{
    n: number | string;
  }>`select count(*) as n from ${m.from} where ${m.where}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** One page of the matching tests' ids, by name (then id). */
export async function listAllTestIds(
  db: Queryable,
  repoId: string,
  f: AllTestsFilter,
  page: { limit: number; offset: number },
): Promise<string[]> {
  const m = matching(repoId, f);
  const { rows } = await sql<{ id: string }>`select ${m.id} as id from ${m.from} where ${m.where}
    order by ${m.order} limit ${page.limit} offset ${page.offset}`.execute(db);
  return rows.map((r) => r.id);
}

/** The ordinals of the repository's tests that `owner` owns (read from the owner index alone). */
export async function ownedOrdinals(db: Queryable, repoId: string, owner: string): Promise<number[]> {
  const rows = await db
    .selectFrom('test_owners')
    .select('ordinal')
    .where('repo_id', '=', repoId)
    .where('owner', '=', owner)
    .execute();
  return rows.map((r) => Number(r.ordinal));
}

/**
 * The repository's health_version, how many test ordinals it has handed out
 * (repositories.test_ordinals) and its owners_version: tests are only ever added, in the ingest
 * transaction that raises this count, and their name, classname and file never change, so the count
 * names the repository's searchable texts exactly; with owners_version (raised by every change of a
 * known test's owners) it names every owner's tests too. Undefined for an unknown repository.
 */
export async function testVersions(
  db: Queryable,
  repoId: string,
): Promise<{ health: number; ordinals: number; owners: number } | undefined> {
  const row = await db
    .selectFrom('repositories')
    .select(['health_version', 'test_ordinals', 'owners_version'])
    .where('id', '=', repoId)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        health: Number(row.health_version),
        ordinals: Number(row.test_ordinals),
        owners: Number(row.owners_version),
      };
}

/** The repository's tests in the list's order (name, then id): ordinal and the texts the search reads. */
export async function searchableTests(
  db: Queryable,
  repoId: string,
): Promise<{ ordinal: number; name: string; classname: string | null; file: string | null }[]> {
  const rows = await db
    .selectFrom('test_cases')
    .select(['ordinal', 'name', 'classname', 'file'])
    .where('repo_id', '=', repoId)
    .orderBy('name')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    ordinal: Number(r.ordinal),
    name: r.name,
    classname: r.classname,
    file: r.file,
  }));
}

/** The ids of the repository's tests with these ordinals, in the order of `ordinals`. */
export async function idsOfOrdinals(
  db: Queryable,
  repoId: string,
  ordinals: readonly number[],
): Promise<string[]> {
  if (ordinals.length === 0) return [];
  const rows = await db
    .selectFrom('test_cases')
    .select(['id', 'ordinal'])
    .where('repo_id', '=', repoId)
    .where('ordinal', 'in', [...ordinals])
    .execute();
  const byOrdinal = new Map(rows.map((r) => [Number(r.ordinal), r.id]));
  return ordinals.flatMap((o) => byOrdinal.get(o) ?? []);
}
