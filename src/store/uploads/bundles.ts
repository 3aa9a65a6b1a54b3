import type { Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { BundleUploadsTable } from '../schema.ts';

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

/**
 * Claims a bundle URL for one PUT: sets `consumed_at` (the claim's time) while no upload was stored
 * from it and no other PUT holds a claim taken at or after `staleBefore`. False: another PUT holds it,
 * or it was used. Only the PUT that claimed it decodes the bundle.
 */
export async function claimBundleUpload(
  db: Queryable,
  id: string,
  at: number,
  staleBefore: number,
): Promise<boolean> {
  const result = await db
    .updateTable('bundle_uploads')
    .set({ consumed_at: at })
    .where('id', '=', id)
    .where('upload_id', 'is', null)
    .where((eb) => eb.or([eb('consumed_at', 'is', null), eb('consumed_at', '<', staleBefore)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives a claim back after a PUT that stored nothing (a refused bundle, a client gone), so the URL can be retried. */
export async function releaseBundleClaim(db: Queryable, id: string, claimedAt: number): Promise<void> {
  await db
    .updateTable('bundle_uploads')
    .set({ consumed_at: null })
    .where('id', '=', id)
    .where('upload_id', 'is', null)
    .where('consumed_at', '=', claimedAt)
    .execute();
}

/** The stored answer (JSON) of the upload a bundle URL made, if that upload is still kept. */
export async function findBundleUploadResult(db: Queryable, uploadId: string): Promise<string | undefined> {
  const row = await db.selectFrom('uploads').select('result').where('id', '=', uploadId).executeTakeFirst();
  return row?.result;
}
