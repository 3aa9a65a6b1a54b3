import type { Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { ApiTokensTable } from '../schema.ts';

export type ApiTokenRow = Selectable<ApiTokensTable>;

/** A token row with its organization's slug, as the auth check and `token list` need it. */
export type ApiTokenWithOrg = ApiTokenRow & { org_slug: string };

export async function insertToken(db: Queryable, row: ApiTokenRow): Promise<void> {
  await db.insertInto('api_tokens').values(row).execute();
}

/** Token rows joined with their organization's slug. */
function tokensWithOrg(db: Queryable) {
  return db
    .selectFrom('api_tokens')
    .innerJoin('organizations', 'organizations.id', 'api_tokens.org_id')
    .selectAll('api_tokens')
    .select('organizations.slug as org_slug');
}

export function findTokenByHash(db: Queryable, tokenHash: string): Promise<ApiTokenWithOrg | undefined> {
  return tokensWithOrg(db).where('api_tokens.token_hash', '=', tokenHash).executeTakeFirst();
}

export function findTokenById(db: Queryable, id: string): Promise<ApiTokenWithOrg | undefined> {
  return tokensWithOrg(db).where('api_tokens.id', '=', id).executeTakeFirst();
}

export function listTokens(db: Queryable, orgId: string | undefined): Promise<ApiTokenWithOrg[]> {
  let query = tokensWithOrg(db);
  if (orgId !== undefined) query = query.where('api_tokens.org_id', '=', orgId);
  return query
    .orderBy('organizations.slug')
    .orderBy('api_tokens.created_at')
    .orderBy('api_tokens.id')
    .execute();
}

/** Marks the token revoked; false when no unrevoked token has that id. */
export async function revokeToken(db: Queryable, id: string, at: number): Promise<boolean> {
  const result = await db
    .updateTable('api_tokens')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function touchToken(db: Queryable, id: string, at: number): Promise<void> {
  await db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
}
