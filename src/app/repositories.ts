import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/bulk.ts';
import { AppError } from '../domain/errors.ts';
import { repoFullName } from '../domain/testid/index.ts';
import { Lru } from '../lib/lru.ts';
import * as repos from '../store/tenancy/repos.ts';
import type { AppContext, Caller } from './context.ts';
import type { PageTokens } from './page-token.ts';
import { type PageInfo, type PageQuery, paginate } from './paginate.ts';

/** The `repo` object every v1 endpoint takes. */
export interface RepoRef {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}

/**
 * A repository's identity, which never changes once created. Not its test health: read
 * healthVersion() for that (a repository may come from the lookup cache).
 */
export type Repository = Omit<repos.RepositoryRow, 'health_version' | 'test_ordinals'>;

/**
 * Repositories by organization and case-folded name, kept by the app (sized by
 * MAINLINE_REPOSITORY_CACHE) and reached through the caller the auth hook made. Only identities are
 * kept, and only of repositories that exist: repositories are never renamed or deleted, and one not
 * found is looked up again next time. The organization is part of the key, so a caller only ever
 * gets its own organization's rows.
 */
export class RepositoryCache {
  readonly #rows: Lru<Repository>;

  constructor(readonly max: number) {
    this.#rows = new Lru(max);
  }

  /**
   * One string per (organization, host, owner, name), and different strings for different ones: every
   * part but the last is preceded by its length, so no part can stand in for another whatever it
   * holds. A template costs a tenth of the JSON.stringify of an array it replaces (per request).
   */
  static #key(orgId: string, key: repos.RepoKey): string {
    return `${orgId.length}:${orgId}${key.hostKey.length}:${key.hostKey}${key.ownerKey.length}:${key.ownerKey}${key.nameKey}`;
  }

  get(orgId: string, key: repos.RepoKey): Repository | undefined {
    const row = this.#rows.get(RepositoryCache.#key(orgId, key));
    return row?.org_id === orgId ? row : undefined;
  }

  set(row: Repository): void {
    if (this.max === 0) return;
    const { health_version: _v, test_ordinals: _o, ...identity } = row as repos.RepositoryRow;
    const key = { hostKey: row.host_key, ownerKey: row.owner_key, nameKey: row.name_key };
    this.#rows.set(RepositoryCache.#key(row.org_id, key), identity);
  }
}

export function repoKey(ref: RepoRef): repos.RepoKey {
  return {
    hostKey: ref.host.toLowerCase(),
    ownerKey: ref.owner.toLowerCase(),
    nameKey: ref.name.toLowerCase(),
  };
}

/** org_url_slug, when a request carries one, must be the caller's organization; otherwise 404. */
export function checkOrgSlug(caller: Caller, orgSlug: string | undefined): void {
  if (orgSlug !== undefined && orgSlug.toLowerCase() !== caller.orgSlug) {
    throw new AppError('ORG_NOT_FOUND', `Organization "${orgSlug}" was not found for this API token`);
  }
}

/**
 * The caller's repository, matched case-insensitively. A repository of another organization
 * answers exactly like one that does not exist.
 */
export async function findRepository(db: Queryable, caller: Caller, ref: RepoRef): Promise<Repository> {
  const key = repoKey(ref);
  const cache = caller.repositories;
  const cached = cache?.get(caller.orgId, key);
  if (cached !== undefined) return cached;
  const row = await repos.findRepo(db, caller.orgId, key);
  if (row === undefined) {
    throw new AppError(
      'REPO_NOT_FOUND',
      `Repository ${repoFullName(ref)} is not known to organization "${caller.orgSlug}". A repository is created by its first test-results upload, by createQueue, or by POST /v1/repositories/create.`,
    );
  }
  cache?.set(row);
  return row;
}

/** Returns the caller's repository, creating it on first use (uploads and createQueue do this). */
export async function ensureRepository(
  db: Queryable,
  caller: Caller,
  ref: RepoRef,
  now: number,
): Promise<{ repository: Repository; created: boolean }> {
  const created = await repos.insertRepoIfAbsent(db, newRow(caller, ref, now));
  const repository = await repos.findRepo(db, caller.orgId, repoKey(ref));
  if (repository === undefined) throw new Error(`repository ${repoFullName(ref)} vanished after insert`);
  return { repository, created };
}

/** Creates a repository explicitly; 409 when the organization already has it. */
export async function createRepository(
  db: Queryable,
  caller: Caller,
  ref: RepoRef,
  now: number,
): Promise<Repository> {
  const { repository, created } = await ensureRepository(db, caller, ref, now);
  if (!created) {
    throw new AppError(
      'ALREADY_EXISTS',
      `Repository ${repoFullName(repository)} already exists in organization "${caller.orgSlug}"`,
    );
  }
  return repository;
}

function newRow(caller: Caller, ref: RepoRef, now: number): repos.NewRepositoryRow {
  const key = repoKey(ref);
  return {
    id: randomUUID(),
    org_id: caller.orgId,
    host: ref.host,
    owner: ref.owner,
    name: ref.name,
    host_key: key.hostKey,
    owner_key: key.ownerKey,
    name_key: key.nameKey,
    created_at: now,
  };
}

/**
 * A page of the caller's repositories. `total`, when given, is the organization's repository count the
 * caller already read (repositoryPage), so the page is not counted again.
 */
export function listRepositories(
  db: Queryable,
  caller: Caller,
  tokens: PageTokens,
  query: PageQuery,
  total?: number,
): Promise<{ rows: Repository[]; page: PageInfo }> {
  const keyOf = (r: Repository): repos.RepoKey => ({
    hostKey: r.host_key,
    ownerKey: r.owner_key,
    nameKey: r.name_key,
  });
  return paginate(tokens, ['repositories', caller.orgId], query, {
    count: () => (total === undefined ? repos.countRepos(db, caller.orgId) : Promise.resolve(total)),
    after: (key, limit) => repos.listRepos(db, caller.orgId, { after: key }, limit),
    before: (key, limit) => repos.listRepos(db, caller.orgId, { before: key }, limit),
    keyOf,
  });
}

/**
 * A page of the caller's repositories as a key that names the exact answer and a way to make it. An
 * organization's repositories are only ever added, never renamed or deleted, so their count fixes the
 * list: with the page size, the page token (last: the only free text) and what the links are made of,
 * it names every byte, and the route answers a kept key after one count. The count is read again only
 * once something was committed since (UnchangedReads: none on SQLite while nothing changed; one
 * statement on PostgreSQL, so replicas stay exact). A tampered or foreign token is refused by `make`
 * and never kept.
 */
export async function repositoryPage(ctx: AppContext, caller: Caller, tokens: PageTokens, query: PageQuery) {
  const { db } = ctx;
  const total = await ctx.caches.unchanged.get(db, `repos|${caller.orgId}`, () =>
    repos.countRepos(db, caller.orgId),
  );
  const key = [
    caller.orgId,
    total,
    query.page_size,
    caller.orgSlug,
    ctx.config.publicUrl,
    query.page_token ?? '',
  ];
  return {
    key: key.join('|'),
    now: ctx.now(),
    make: () => listRepositories(db, caller, tokens, query, total),
  };
}

/**
 * The key of the caller's repository named `ref` as repositories/get answers it: a repository's
 * identity never changes once created, so an answer made for an existing one (a missing one throws
 * and is never kept) stays exact as long as it is kept.
 */
export function repositoryAnswerKey(ctx: AppContext, caller: Caller, ref: RepoRef): string {
  const key = repoKey(ref);
  return JSON.stringify([
    caller.orgId,
    caller.orgSlug,
    ctx.config.publicUrl,
    key.hostKey,
    key.ownerKey,
    key.nameKey,
  ]);
}

export { repoFullName };
