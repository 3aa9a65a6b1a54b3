import type { Queryable } from '../../db/bulk.ts';

/**
 * Returns the named secret, storing `candidate` first when there is none yet. Every replica
 * ends up with the same value: the first insert wins and the others read it back.
 */
export async function getOrCreateSecret(
  db: Queryable,
  name: string,
  candidate: string,
  now: number,
): Promise<string> {
  await db
    .insertInto('instance_secrets')
    .values({ name, value: candidate, created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('instance_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.value;
}
