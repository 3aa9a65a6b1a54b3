import type { Queryable } from '../../db/bulk.ts';
import type { ListSnapshotsTable } from '../schema.ts';

/**
 * A list snapshot freezes the order of a list at its first page, so walking its pages visits each
 * row exactly once even when the sort key (e.g. PRs impacted) changes meanwhile. Rows hold only
 * item ids; pages join the live rows.
 */
export function findSnapshot(db: Queryable, id: string): Promise<ListSnapshotsTable | undefined> {
  return db.selectFrom('list_snapshots').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Records a snapshot whose rows `fill` inserted; returns how many rows it holds. */
export async function saveSnapshot(
  db: Queryable,
  snapshot: { id: string; queryHash: string; version: number; createdAt: number },
  fill: (db: Queryable) => Promise<void>,
): Promise<number> {
  await db
    .insertInto('list_snapshots')
    .values({
      id: snapshot.id,
      query_hash: snapshot.queryHash,
      version: snapshot.version,
      total: 0,
      created_at: snapshot.createdAt,
    })
    .execute();
  await fill(db);
  const { n } = await db
    .selectFrom('list_snapshot_rows')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('snapshot_id', '=', snapshot.id)
    .executeTakeFirstOrThrow();
  await db
    .updateTable('list_snapshots')
    .set({ total: Number(n) })
    .where('id', '=', snapshot.id)
    .execute();
  return Number(n);
}

/** The newest snapshot of this query taken at this data version since `since`, if any. */
export function findReusableSnapshot(
  db: Queryable,
  queryHash: string,
  version: number,
  since: number,
): Promise<ListSnapshotsTable | undefined> {
  return db
    .selectFrom('list_snapshots')
    .selectAll()
    .where('query_hash', '=', queryHash)
    .where('version', '=', version)
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Deletes snapshots created before `before`, with their rows. */
export async function deleteSnapshotsBefore(db: Queryable, before: number): Promise<number> {
  const old = db.selectFrom('list_snapshots').select('id').where('created_at', '<', before);
  await db.deleteFrom('list_snapshot_rows').where('snapshot_id', 'in', old).execute();
  const result = await db.deleteFrom('list_snapshots').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
