import { type Kysely, PostgresAdapter } from 'kysely';

/** Migrations branch on the engine only where the two differ; each use says why. */
export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Type of an auto-assigned 64-bit id: BIGSERIAL on PostgreSQL; on SQLite an INTEGER PRIMARY KEY
 * is the rowid and is assigned automatically.
 */
export function serialType(db: Kysely<unknown>): 'bigserial' | 'integer' {
  return isPostgres(db) ? 'bigserial' : 'integer';
}
