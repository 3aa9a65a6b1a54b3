import type { Selectable } from 'kysely';
import type { Queryable } from './db.ts';
import type { BundleUploadsTable } from './schema.ts';

export type BundleUploadRow = Selectable<BundleUploadsTable>;

export async function insertBundleUpload(db: Queryable, row: BundleUploadRow): Promise<void> {
  await db.insertInto('bundle_uploads').values(row).execute();
}

export function findBundleUpload(db: Queryable, id: string): Promise<BundleUploadRow | undefined> {
  return db.selectFrom('bundle_uploads').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function markBundleConsumed(
  db: Queryable,
  id: string,
  uploadId: string,
  at: number,
): Promise<void> {
  await db
    .updateTable('bundle_uploads')
    .set({ consumed_at: at, upload_id: uploadId })
    .where('id', '=', id)
    .execute();
}

export async function deleteBundleUploadsBefore(db: Queryable, before: number): Promise<void> {
  await db.deleteFrom('bundle_uploads').where('expires_at', '<', before).execute();
}
