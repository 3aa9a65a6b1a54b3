import type { Queryable } from './db.ts';

/**
 * Every quarantined test id of a repository, in the order of the quarantined list (name, then id,
 * as the database orders them): one index-only walk of test_cases_quarantined.
 */
export async function allQuarantinedIds(db: Queryable, repoId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('test_cases')
    .select('id')
    .where('repo_id', '=', repoId)
    .where('quarantined', '=', 1)
    .orderBy('name')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}
