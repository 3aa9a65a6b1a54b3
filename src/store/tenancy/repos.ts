import type { Insertable, Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { RepositoriesTable } from '../schema.ts';
import { lockRepositoryHealth } from '../uploads/results.ts';

export type RepositoryRow = Selectable<RepositoriesTable>;
export type NewRepositoryRow = Insertable<RepositoriesTable>;

/** The case-folded identity of a repository within an organization. */
export interface RepoKey {
  readonly hostKey: string;
  readonly ownerKey: string;
  readonly nameKey: string;
}

export function findRepo(db: Queryable, orgId: string, key: RepoKey): Promise<RepositoryRow | undefined> {
  return db
    .selectFrom('repositories')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('host_key', '=', key.hostKey)
    .where('owner_key', '=', key.ownerKey)
    .where('name_key', '=', key.nameKey)
    .executeTakeFirst();
}

/** The repository's id and name, as a forge addresses it; throws when there is no such repository. */
export function findRepoAddress(
  db: Queryable,
  repoId: string,
): Promise<{ id: string; host: string; owner: string; name: string }> {
  return db
    .selectFrom('repositories')
    .select(['id', 'host', 'owner', 'name'])
    .where('id', '=', repoId)
    .executeTakeFirstOrThrow();
}

/** The id of the oldest repository with this host, owner and name in any organization (its first user). */
export async function oldestRepoIdNamed(
  db: Queryable,
  repo: { host: string; owner: string; name: string },
): Promise<string | undefined> {
  const first = await db
    .selectFrom('repositories')
    .select('id')
    .where('host_key', '=', repo.host.toLowerCase())
    .where('owner_key', '=', repo.owner.toLowerCase())
    .where('name_key', '=', repo.name.toLowerCase())
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst();
  return first?.id;
}

/** Inserts the repository unless it exists; true when this call created it. */
export async function insertRepoIfAbsent(db: Queryable, row: NewRepositoryRow): Promise<boolean> {
  const result = await db
    .insertInto('repositories')
    .values(row)
    .onConflict((oc) => oc.columns(['org_id', 'host_key', 'owner_key', 'name_key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** An organization's repositories with this owner and name, on any host (by host). */
export function findReposByOwnerAndName(
  db: Queryable,
  orgId: string,
  key: { ownerKey: string; nameKey: string },
): Promise<RepositoryRow[]> {
  return db
    .selectFrom('repositories')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('owner_key', '=', key.ownerKey)
    .where('name_key', '=', key.nameKey)
    .orderBy('host_key')
    .execute();
}

/**
 * Up to `limit` of an organization's repositories strictly after (ascending) or before (descending)
 * the given key, in (host, owner, name) order. Keyset, never OFFSET.
 */
export function listRepos(
  db: Queryable,
  orgId: string,
  cursor: { after?: RepoKey | undefined } | { before?: RepoKey | undefined },
  limit: number,
): Promise<RepositoryRow[]> {
  const descending = 'before' in cursor;
  const key = 'before' in cursor ? cursor.before : 'after' in cursor ? cursor.after : undefined;
  const order = descending ? 'desc' : 'asc';
  let query = db.selectFrom('repositories').selectAll().where('org_id', '=', orgId);
  if (key !== undefined) {
    query = query.where((eb) =>
      eb(
        eb.refTuple('host_key', 'owner_key', 'name_key'),
        descending ? '<' : '>',
        eb.tuple(key.hostKey, key.ownerKey, key.nameKey),
      ),
    );
  }
  return query
    .orderBy('host_key', order)
    .orderBy('owner_key', order)
    .orderBy('name_key', order)
    .limit(limit)
    .execute();
}

/** Every repository's id, of every organization (the periodic pass visits them all). */
export async function allRepoIds(db: Queryable): Promise<string[]> {
  const rows = await db.selectFrom('repositories').select('id').orderBy('id').execute();
  return rows.map((r) => r.id);
}

export async function countRepos(db: Queryable, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('repositories')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A write to the repository's test health (its test_cases rows, or the attempts its reads count):
 * takes the repository's health lock before `write`, and bumps its health_version after it when it
 * changed something. Every store writer of test_cases goes through here, so the caches keyed by the
 * version (app/caches.ts) see every change; `write` answers whether it changed anything.
 */
export async function writeTestHealth<T>(
  db: Queryable,
  repoId: string,
  write: () => Promise<{ changed: boolean; value: T }>,
): Promise<T> {
  await lockRepositoryHealth(db, repoId);
  const { changed, value } = await write();
  if (changed) await bumpHealthVersion(db, repoId);
  return value;
}

/** Marks that the repository's test health changed (invalidates reusable list snapshots). */
export async function bumpHealthVersion(db: Queryable, repoId: string): Promise<void> {
  await db
    .updateTable('repositories')
    .set((eb) => ({ health_version: eb('health_version', '+', 1) }))
    .where('id', '=', repoId)
    .execute();
}

/**
 * Hands out `count` new test ordinals of the repository (test_cases.ordinal) and returns the first:
 * they are first … first + count − 1. Runs in the ingesting transaction, which holds the repository's
 * health lock, so two uploads never get the same ones; ordinals of rows that end up not inserted are
 * simply unused.
 */
export async function reserveTestOrdinals(db: Queryable, repoId: string, count: number): Promise<number> {
  const row = await db
    .updateTable('repositories')
    .set((eb) => ({ test_ordinals: eb('test_ordinals', '+', count) }))
    .where('id', '=', repoId)
    .returning('test_ordinals')
    .executeTakeFirstOrThrow();
  return Number(row.test_ordinals) - count;
}

export async function healthVersion(db: Queryable, repoId: string): Promise<number> {
  const row = await db
    .selectFrom('repositories')
    .select('health_version')
    .where('id', '=', repoId)
    .executeTakeFirstOrThrow();
  return Number(row.health_version);
}
