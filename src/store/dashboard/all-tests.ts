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
