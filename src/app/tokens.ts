import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/bulk.ts';
import { AppError } from '../domain/errors.ts';
import { reservedOrgSlugReason } from '../domain/org-slug.ts';
import { Lru } from '../lib/lru.ts';
import { findOrgBySlug, insertOrgIfAbsent } from '../store/tenancy/orgs.ts';
import * as tokens from '../store/tenancy/tokens.ts';
import type { Caller } from './context.ts';

/** Lower-case letters, digits and inner dashes, 1–64 characters. */
export const ORG_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const TOKEN_PREFIX = 'ml_';
const SHOWN_PREFIX_LENGTH = 10;
/** last_used_at is written at most this often per token, to keep reads from writing. */
const TOUCH_INTERVAL_MS = 60_000;

export function hashToken(token: string): string {
  // The one-shot hash: the same digest as createHash().update().digest() without a Hash object per request.
  return hash('sha256', token, 'hex');
}

/** A new random token: `ml_` followed by 256 bits in base64url. */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function assertOrgSlug(slug: string): void {
  if (!ORG_SLUG_PATTERN.test(slug)) {
    throw new AppError(
      'VALIDATION_FAILED',
      `"${slug}" is not a valid organization slug: use 1–64 lower-case letters, digits and dashes, not starting or ending with a dash`,
    );
  }
}

export interface CreatedToken {
  readonly token: string;
  readonly id: string;
  readonly orgSlug: string;
  readonly orgCreated: boolean;
}

/** Creates the organization if needed and a new token for it. The token is returned once, never stored. */
export async function createToken(
  db: Queryable,
  input: { orgSlug: string; name: string; now: number; token?: string },
): Promise<CreatedToken> {
  assertOrgSlug(input.orgSlug);
  // A reserved slug is refused only for a new organization: one made before the rule keeps its tokens.
  const reserved = reservedOrgSlugReason(input.orgSlug);
  if (reserved !== undefined && (await findOrgBySlug(db, input.orgSlug)) === undefined) {
    throw new AppError('VALIDATION_FAILED', reserved);
  }
  const orgCreated = await insertOrgIfAbsent(db, {
    id: randomUUID(),
    slug: input.orgSlug,
    created_at: input.now,
  });
  const org = await findOrgBySlug(db, input.orgSlug);
  if (org === undefined) throw new Error(`organization ${input.orgSlug} vanished while creating a token`);
  const token = input.token ?? generateToken();
  const id = randomUUID();
  await tokens.insertToken(db, {
    id,
    org_id: org.id,
    name: input.name,
    token_prefix: token.slice(0, SHOWN_PREFIX_LENGTH),
    token_hash: hashToken(token),
    created_at: input.now,
    last_used_at: null,
    revoked_at: null,
  });
  return { token, id, orgSlug: org.slug, orgCreated };
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Resolves a presented token to its caller. The row is found by the SHA-256 of the token (an index
 * lookup reveals nothing useful: the attacker cannot steer the hash), then the stored hash is
 * compared in constant time. Unknown and revoked tokens get the same answer.
 */
export async function authenticate(
  db: Queryable,
  presented: string,
  now: number,
  hash: string = hashToken(presented),
): Promise<Caller> {
  const row = await tokens.findTokenByHash(db, hash);
  if (row === undefined || !sameHash(row.token_hash, hash) || row.revoked_at !== null) {
    throw new AppError(
      'INVALID_TOKEN',
      'The API token in x-api-token is not valid: it is unknown or revoked',
    );
  }
  if (row.last_used_at === null || now - row.last_used_at > TOUCH_INTERVAL_MS) {
    // Not awaited: the request must not wait for the writer (an upload may hold it for seconds), and
    // a failed touch only leaves last_used_at older.
    tokens.touchToken(db, row.id, now).catch(() => {});
  }
  return { tokenId: row.id, tokenName: row.name, orgId: row.org_id, orgSlug: row.org_slug };
}

export interface TokenListing {
  readonly id: string;
  readonly orgSlug: string;
  readonly name: string;
  readonly prefix: string;
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
  readonly revokedAt: number | null;
}

export async function listTokens(db: Queryable, orgSlug: string | undefined): Promise<TokenListing[]> {
  let orgId: string | undefined;
  if (orgSlug !== undefined) {
    const org = await findOrgBySlug(db, orgSlug);
    if (org === undefined) throw new AppError('ORG_NOT_FOUND', `No organization "${orgSlug}"`);
    orgId = org.id;
  }
  const rows = await tokens.listTokens(db, orgId);
  return rows.map((r) => ({
    id: r.id,
    orgSlug: r.org_slug,
    name: r.name,
    prefix: r.token_prefix,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  }));
}

/**
 * Revokes a token by id. Revoking twice is an error that says it was already revoked. `kept`: the token
 * cache of an app in this process (its caches.tokens), which then trusts nothing it held; an app in
 * another process (`mainline token revoke` has its own) bounds what it kept by time.
 */
export async function revokeToken(db: Queryable, id: string, now: number, kept?: TokenCache): Promise<void> {
  const row = await tokens.findTokenById(db, id);
  if (row === undefined) throw new AppError('BAD_REQUEST', `No token with id ${id}`);
  if (row.revoked_at !== null) throw new AppError('CONFLICT', `Token ${id} was already revoked`);
  await tokens.revokeToken(db, id, now);
  kept?.revoked();
}

/**
 * Callers of tokens that authenticated recently, by the token's SHA-256 (never the token), each
 * trusted for `ttlMs` after its lookup. A revocation in this process forgets them all (revocations
 * are rare); one elsewhere is seen once the entry expires. Unknown tokens are never kept.
 */
export class TokenCache {
  #entries: Lru<{ readonly caller: Caller; readonly until: number }>;
  /** Bumped by each revocation: a lookup that began before it must not be kept. */
  #generation = 0;

  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
  ) {
    this.#entries = new Lru(max);
  }

  get enabled(): boolean {
    return this.max > 0 && this.ttlMs > 0;
  }

  /** Where a lookup starts: pass it to `set` with the lookup's answer. */
  get generation(): number {
    return this.#generation;
  }

  get(hash: string, now: number): Caller | undefined {
    if (!this.enabled) return undefined;
    const entry = this.#entries.get(hash);
    if (entry === undefined) return undefined;
    if (now >= entry.until || now < entry.until - this.ttlMs) {
      this.#entries.delete(hash);
      return undefined;
    }
    return entry.caller;
  }

  /** Keeps the caller of a token looked up at `now`, unless a revocation came since `generation`. */
  set(hash: string, caller: Caller, now: number, generation: number): void {
    if (!this.enabled || generation !== this.#generation) return;
    this.#entries.set(hash, { caller, until: now + this.ttlMs });
  }

  /** A token was revoked: nothing kept may be trusted any more. */
  revoked(): void {
    this.#generation++;
    this.#entries = new Lru(this.max);
  }
}

export type BootstrapOutcome =
  /** The token was created now (and the organization too when absent). */
  | { kind: 'created'; orgCreated: boolean }
  /** The token already existed for this organization; nothing changed. */
  | { kind: 'present'; revoked: boolean };

/** Makes sure the bootstrap organization and token exist. A token owned by another organization is refused. */
export async function ensureBootstrapToken(
  db: Queryable,
  input: { orgSlug: string; token: string; now: number },
): Promise<BootstrapOutcome> {
  const existing = await tokens.findTokenByHash(db, hashToken(input.token));
  if (existing !== undefined) {
    if (existing.org_slug !== input.orgSlug) {
      throw new AppError(
        'CONFLICT',
        `MAINLINE_BOOTSTRAP_TOKEN is already a token of organization "${existing.org_slug}", not "${input.orgSlug}"`,
      );
    }
    return { kind: 'present', revoked: existing.revoked_at !== null };
  }
  try {
    const created = await createToken(db, { ...input, name: 'bootstrap' });
    return { kind: 'created', orgCreated: created.orgCreated };
  } catch (error) {
    // Replicas starting together on a new database race to insert the same token: the loser finds the
    // winner's (and answers as if it had been there), anything else is a real error.
    if ((await tokens.findTokenByHash(db, hashToken(input.token))) === undefined) throw error;
    return ensureBootstrapToken(db, input);
  }
}
