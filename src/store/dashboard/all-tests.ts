import { sql } from 'kysely';
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

/** The repository's test rows (never raw results) matching the filter. */
function matching(db: Queryable, repoId: string, f: AllTestsFilter) {
  let query = db.selectFrom('test_cases').where('repo_id', '=', repoId);
  if (f.search !== '') {
    const like = contains(f.search.toLowerCase());
    query = query.where(
      sql<boolean>`(lower(name) like ${like} escape '\\' or lower(coalesce(classname, '')) like ${like} escape '\\' or lower(coalesce(file, '')) like ${like} escape '\\')`,
    );
  }
  if (f.file !== '') {
    query = query.where(
      sql<boolean>`lower(coalesce(file, '')) like ${contains(f.file.toLowerCase())} escape '\\'`,
    );
  }
  if (f.owner !== '') {
    // codeowners is a JSON array of strings: match one whole element.
    query = query.where(sql<boolean>`codeowners like ${contains(JSON.stringify(f.owner))} escape '\\'`);
  }
  return query;
}

export async function countAllTests(db: Queryable, repoId: string, f: AllTestsFilter): Promise<number> {
  const row = await matching(db, repoId, f)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One page of the matching tests' ids, by name (then id). */
export async function listAllTestIds(
  db: Queryable,
  repoId: string,
  f: AllTestsFilter,
  page: { limit: number; offset: number },
): Promise<string[]> {
  const rows = await matching(db, repoId, f)
    .select('id')
    .orderBy('name')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * The repository's health_version, and how many test ordinals it has handed out
 * (repositories.test_ordinals): tests are only ever added, in the ingest transaction that raises this
 * count, and their name, classname and file never change, so the count names the repository's
 * searchable texts exactly. Undefined for an unknown repository.
 */
export async function testVersions(
  db: Queryable,
  repoId: string,
): Promise<{ health: number; ordinals: number } | undefined> {
  const row = await db
    .selectFrom('repositories')
    .select(['health_version', 'test_ordinals'])
    .where('id', '=', repoId)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { health: Number(row.health_version), ordinals: Number(row.test_ordinals) };
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
