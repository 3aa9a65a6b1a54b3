import type { Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { UploadsTable } from '../schema.ts';
import { writeTestHealth } from '../tenancy/repos.ts';
import { deleteUploadPasses } from './passes.ts';
import { refreshFailureHours, removeUploadRollups } from './rollups-write.ts';

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

/** The ids of a repository's oldest uploads created before `before` (index uploads_repo_created). */
export async function uploadsCreatedBefore(
  db: Queryable,
  repoId: string,
  before: number,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('uploads')
    .select('id')
    .where('repo_id', '=', repoId)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Deletes an upload and its attempts (passes and failed or skipped results, by their upload
 * indexes), taking them out of the rollups. Returns the attempts deleted. Its tests stay, with their status and history.
 */
export async function deleteUploadWithAttempts(db: Queryable, id: string): Promise<number> {
  const upload = await db.selectFrom('uploads').select('repo_id').where('id', '=', id).executeTakeFirst();
  if (upload === undefined) return 0;
  // The attempts the test-health reads count change: a write to the repository's health.
  return writeTestHealth(db, upload.repo_id, async () => {
    // Its attempts leave the rollups with it (store/uploads/rollups.ts).
    const rollups = await removeUploadRollups(db, id);
    const passes = await deleteUploadPasses(db, id);
    const results = await db.deleteFrom('test_results').where('upload_id', '=', id).executeTakeFirst();
    await db.deleteFrom('uploads').where('id', '=', id).execute();
    if (rollups !== undefined) await refreshFailureHours(db, rollups.repoId, rollups.failed);
    return { changed: true, value: passes + Number(results.numDeletedRows) };
  });
}
