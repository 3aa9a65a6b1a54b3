import type { Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { RepoSettingsTable } from '../schema.ts';

export type RepoSettingsRow = Selectable<RepoSettingsTable>;

export function findRepoSettings(db: Queryable, repoId: string): Promise<RepoSettingsRow | undefined> {
  return db.selectFrom('repo_settings').selectAll().where('repo_id', '=', repoId).executeTakeFirst();
}

export async function upsertRepoSettings(db: Queryable, row: RepoSettingsRow): Promise<void> {
  const { repo_id: _id, ...rest } = row;
  await db
    .insertInto('repo_settings')
    .values(row)
    .onConflict((oc) => oc.column('repo_id').doUpdateSet(rest))
    .execute();
}
