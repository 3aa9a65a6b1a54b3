import type { Selectable } from 'kysely';
import type { Queryable } from './db.ts';
import type { UploadsTable } from './schema.ts';

export type UploadRow = Selectable<UploadsTable>;

export function findUploadByKey(db: Queryable, repoId: string, key: string): Promise<UploadRow | undefined> {
  return db
    .selectFrom('uploads')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('upload_key', '=', key)
    .executeTakeFirst();
}

export async function insertUpload(db: Queryable, row: UploadRow): Promise<void> {
  await db.insertInto('uploads').values(row).execute();
}
