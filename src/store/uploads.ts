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

/** Sets an upload's answer (stored with the upload so a repeated upload_key gets the same one). */
export async function setUploadResult(db: Queryable, id: string, result: string): Promise<void> {
  await db.updateTable('uploads').set({ result }).where('id', '=', id).execute();
}
