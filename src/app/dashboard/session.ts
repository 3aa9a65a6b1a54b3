import { findTokenById, touchToken } from '../../store/tenancy/tokens.ts';
import type { AppContext, Caller } from '../context.ts';
import { authenticate } from '../tokens.ts';

/** last_used_at is written at most this often per token (as for API calls). */
const TOUCH_INTERVAL_MS = 60_000;

/** Signing in: the token is checked exactly as the API checks it (unknown or revoked: INVALID_TOKEN). */
export function signIn(ctx: AppContext, token: string): Promise<Caller> {
  return authenticate(ctx.db, token.trim(), ctx.now());
}

/**
 * The caller of a session, re-read from the token row on every request: a revoked or deleted token
 * ends the session at once. Undefined when the session no longer stands.
 */
export async function sessionCaller(ctx: AppContext, tokenId: string): Promise<Caller | undefined> {
  const row = await findTokenById(ctx.db, tokenId);
  if (row === undefined || row.revoked_at !== null) return undefined;
  const now = ctx.now();
  if (row.last_used_at === null || now - row.last_used_at > TOUCH_INTERVAL_MS) {
    await touchToken(ctx.db, row.id, now);
  }
  return { tokenId: row.id, tokenName: row.name, orgId: row.org_id, orgSlug: row.org_slug };
}
