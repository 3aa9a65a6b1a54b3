/**
 * Row types of every table, as Kysely sees them. Conventions that hold on both engines:
 * ids are text (UUID strings), times are epoch milliseconds in BIGINT columns, booleans are
 * INTEGER 0/1 (better-sqlite3 cannot bind JS booleans), JSON is text.
 */
export interface OrganizationsTable {
  id: string;
  /** Lower-case URL slug, unique. */
  slug: string;
  created_at: number;
}

export interface ApiTokensTable {
  id: string;
  org_id: string;
  /** Free-text label shown by `mainline token list`. */
  name: string;
  /** The first characters of the token, shown to tell tokens apart; not enough to use it. */
  token_prefix: string;
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  token_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface RepositoriesTable {
  id: string;
  org_id: string;
  /** As first given; shown in responses. */
  host: string;
  owner: string;
  name: string;
  /** Lower-cased copies: repositories match case-insensitively, as on GitHub. */
  host_key: string;
  owner_key: string;
  name_key: string;
  created_at: number;
}

export interface InstanceSecretsTable {
  name: string;
  /** base64url random bytes. */
  value: string;
  created_at: number;
}

export interface Tables {
  instance_secrets: InstanceSecretsTable;
  organizations: OrganizationsTable;
  api_tokens: ApiTokensTable;
  repositories: RepositoriesTable;
}
