import type { Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { GitHubDeliveriesTable } from '../schema.ts';

export type GitHubDeliveryRow = Selectable<GitHubDeliveriesTable>;

/** Stores a delivery; false when this delivery id was stored before (a redelivery). */
export async function insertDelivery(
  db: Queryable,
  row: { id: string; event: string; action: string | null; payload: string; received_at: number },
): Promise<boolean> {
  const inserted = await db
    .insertInto('github_deliveries')
    .values({ ...row, processed_at: null, outcome: null })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Deliveries not processed yet, oldest first. */
export function pendingDeliveries(db: Queryable, limit: number): Promise<GitHubDeliveryRow[]> {
  return db
    .selectFrom('github_deliveries')
    .selectAll()
    .where('processed_at', 'is', null)
    .orderBy('received_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function markDeliveryProcessed(
  db: Queryable,
  id: string,
  outcome: string,
  at: number,
): Promise<void> {
  await db
    .updateTable('github_deliveries')
    .set((eb) => ({ processed_at: at, outcome, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export async function markDeliveryFailed(db: Queryable, id: string, error: string): Promise<number> {
  const row = await db
    .updateTable('github_deliveries')
    .set((eb) => ({ outcome: error.slice(0, 2000), attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .returning('attempts')
    .executeTakeFirst();
  return row?.attempts ?? 0;
}

export function findDelivery(db: Queryable, id: string): Promise<GitHubDeliveryRow | undefined> {
  return db.selectFrom('github_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Forgets processed deliveries received before `before` (GitHub redelivers within days, not weeks). */
export async function pruneDeliveries(db: Queryable, before: number): Promise<void> {
  await db
    .deleteFrom('github_deliveries')
    .where('processed_at', 'is not', null)
    .where('received_at', '<', before)
    .execute();
}

/**
 * Stores a delivery that is carried out as it arrives (a GitLab webhook, under a prefixed id) as
 * processed, so the GitHub processor never picks it up; false when its id was stored before.
 */
export async function insertHandledDelivery(
  db: Queryable,
  row: { id: string; event: string; action: string | null; at: number },
): Promise<boolean> {
  const inserted = await db
    .insertInto('github_deliveries')
    .values({
      id: row.id,
      event: row.event,
      action: row.action,
      payload: '{}',
      received_at: row.at,
      processed_at: row.at,
      outcome: 'processing',
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Forgets a delivery, so a redelivery of it is carried out again. */
export async function deleteDelivery(db: Queryable, id: string): Promise<void> {
  await db.deleteFrom('github_deliveries').where('id', '=', id).execute();
}

/** Records what a delivery carried out as it arrived came to. */
export async function setDeliveryOutcome(db: Queryable, id: string, outcome: string): Promise<void> {
  await db
    .updateTable('github_deliveries')
    .set({ outcome: outcome.slice(0, 2000), attempts: 1 })
    .where('id', '=', id)
    .execute();
}

/** Forgets the deliveries whose id starts with `prefix` received before `before`. */
export async function pruneDeliveriesWithPrefix(
  db: Queryable,
  prefix: string,
  before: number,
): Promise<void> {
  await db
    .deleteFrom('github_deliveries')
    .where('id', 'like', `${prefix}%`)
    .where('received_at', '<', before)
    .execute();
}

export async function saveTestPr(
  db: Queryable,
  row: { repo_id: string; test_branch: string; pr_number: number; created_at: number },
): Promise<void> {
  await db
    .insertInto('github_test_prs')
    .values(row)
    .onConflict((oc) => oc.columns(['repo_id', 'test_branch']).doUpdateSet({ pr_number: row.pr_number }))
    .execute();
}

export function findTestPr(
  db: Queryable,
  repoId: string,
  testBranch: string,
): Promise<{ pr_number: number } | undefined> {
  return db
    .selectFrom('github_test_prs')
    .select('pr_number')
    .where('repo_id', '=', repoId)
    .where('test_branch', '=', testBranch)
    .executeTakeFirst();
}

export async function deleteTestPr(db: Queryable, repoId: string, testBranch: string): Promise<void> {
  await db
    .deleteFrom('github_test_prs')
    .where('repo_id', '=', repoId)
    .where('test_branch', '=', testBranch)
    .execute();
}
