import type { Queryable } from '../../db/bulk.ts';
import type { RepoKey } from './repos.ts';

/** What getQuarantineConfig needs of a repository besides its quarantined ids. */
export interface QuarantineRepo {
  readonly id: string;
  readonly host: string;
  readonly owner: string;
  readonly name: string;
  /** health_version: every change to a test's quarantine bumps it. */
  readonly version: number;
  /** Whether quarantining is on (a repository without settings has it on). */
  readonly quarantiningEnabled: boolean;
}

/** The organization's repository by its key, with its version and settings: one statement. */
export async function findQuarantineRepo(
  db: Queryable,
  orgId: string,
  key: RepoKey,
): Promise<QuarantineRepo | undefined> {
  const row = await db
    .selectFrom('repositories as r')
    .leftJoin('repo_settings as s', 's.repo_id', 'r.id')
    .select(['r.id', 'r.host', 'r.owner', 'r.name', 'r.health_version', 's.quarantining_enabled'])
    .where('r.org_id', '=', orgId)
    .where('r.host_key', '=', key.hostKey)
    .where('r.owner_key', '=', key.ownerKey)
    .where('r.name_key', '=', key.nameKey)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: row.id,
    host: row.host,
    owner: row.owner,
    name: row.name,
    version: Number(row.health_version),
    quarantiningEnabled: row.quarantining_enabled === null || Number(row.quarantining_enabled) === 1,
  };
}
