import type { Kysely } from 'kysely';

/**
 * A queue action the forge answered "not yet" (a GitLab merge request set to merge when its
 * pipeline succeeds) waits until `not_before` (ms) before it is carried out again, without counting
 * as a failed attempt; the runner passes over it meanwhile. Null: due now (every existing action).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('queue_actions').addColumn('not_before', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('queue_actions').dropColumn('not_before').execute();
}
