import type { Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { ForgeGrantsTable } from '../schema.ts';

export type ForgeGrantRow = Selectable<ForgeGrantsTable>;

/** The grant of an owner on a host (lower-cased keys), whichever organization holds it. */
export function findGrant(
  db: Queryable,
  hostKey: string,
  ownerKey: string,
): Promise<ForgeGrantRow | undefined> {
  return db
    .selectFrom('forge_grants')
    .selectAll()
    .where('host_key', '=', hostKey)
    .where('owner_key', '=', ownerKey)
    .executeTakeFirst();
}

/** The grant a GitHub App installation was bound with. */
export function findGrantByInstallation(
  db: Queryable,
  installationId: number,
): Promise<ForgeGrantRow | undefined> {
  return db
    .selectFrom('forge_grants')
    .selectAll()
    .where('installation_id', '=', installationId)
    .executeTakeFirst();
}

/** Stores a grant unless the owner (or the installation) is granted already; true when this call stored it. */
export async function insertGrantIfAbsent(db: Queryable, row: ForgeGrantRow): Promise<boolean> {
  const result = await db
    .insertInto('forge_grants')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Records the App installation an existing grant now comes from (connect after grant, or a reinstall). */
export async function setGrantInstallation(
  db: Queryable,
  hostKey: string,
  ownerKey: string,
  installationId: number,
): Promise<void> {
  await db
    .updateTable('forge_grants')
    .set({ installation_id: installationId })
    .where('host_key', '=', hostKey)
    .where('owner_key', '=', ownerKey)
    .execute();
}

/** Removes an organization's grant of an owner; true when there was one. */
export async function deleteGrant(
  db: Queryable,
  orgId: string,
  hostKey: string,
  ownerKey: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('forge_grants')
    .where('org_id', '=', orgId)
    .where('host_key', '=', hostKey)
    .where('owner_key', '=', ownerKey)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Every grant with its organization's slug, optionally of one organization, by host then owner. */
export function listGrants(db: Queryable, orgId?: string): Promise<(ForgeGrantRow & { org_slug: string })[]> {
  let q = db
    .selectFrom('forge_grants')
    .innerJoin('organizations', 'organizations.id', 'forge_grants.org_id')
    .selectAll('forge_grants')
    .select('organizations.slug as org_slug');
  if (orgId !== undefined) q = q.where('forge_grants.org_id', '=', orgId);
  return q.orderBy('forge_grants.host_key').orderBy('forge_grants.owner_key').execute();
}

/**
 * True when the organization owning the stored repository `repoId` holds the grant of its owner on
 * its host: what the forge checks before acting on a repository (queues created before grants existed).
 */
export async function repoIsGranted(db: Queryable, repoId: string): Promise<boolean> {
  const row = await db
    .selectFrom('repositories')
    .innerJoin('forge_grants', (join) =>
      join
        .onRef('forge_grants.host_key', '=', 'repositories.host_key')
        .onRef('forge_grants.owner_key', '=', 'repositories.owner_key')
        .onRef('forge_grants.org_id', '=', 'repositories.org_id'),
    )
    .select('repositories.id')
    .where('repositories.id', '=', repoId)
    .executeTakeFirst();
  return row !== undefined;
}
