import type { Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { OrganizationsTable } from '../schema.ts';

export type OrganizationRow = Selectable<OrganizationsTable>;

export function findOrgBySlug(db: Queryable, slug: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('slug', '=', slug).executeTakeFirst();
}

/** Inserts the organization unless one with that slug exists; true when this call created it. */
export async function insertOrgIfAbsent(db: Queryable, row: OrganizationRow): Promise<boolean> {
  const result = await db
    .insertInto('organizations')
    .values(row)
    .onConflict((oc) => oc.column('slug').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}
