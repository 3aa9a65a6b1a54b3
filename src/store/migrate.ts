import { sql } from 'kysely';
import { type MigrationResult, Migrator } from 'kysely/migration';
import type { Database } from '../db/database.ts';
import { migrations } from './migrations/index.ts';

export interface MigrationReport {
  /** Names of the migrations applied by this call, in order. */
  readonly applied: readonly string[];
  /** Names of all migrations the code knows. */
  readonly known: readonly string[];
}

/** Thrown when a migration fails; the whole run was rolled back (both engines run DDL in a transaction). */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Brings the schema up to date. All pending migrations run in one transaction; on PostgreSQL an
 * advisory lock makes concurrent starts of several replicas wait for one another.
 */
export async function migrateToLatest(database: Database): Promise<MigrationReport> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => ({ ...migrations }) },
    // Kysely looks for its bookkeeping tables in every schema; pin them to the schema this
    // connection works in, so a database shared with other schemas (or other apps) cannot confuse it.
    ...(database.engine === 'postgres' ? { migrationTableSchema: await currentSchema(database) } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const applied = (results ?? []).filter((r: MigrationResult) => r.status === 'Success');
  if (error !== undefined) {
    const failed = (results ?? []).find((r) => r.status === 'Error');
    const cause = error instanceof Error ? error.message : String(error);
    throw new MigrationError(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${cause}`);
  }
  return { applied: applied.map((r) => r.migrationName), known: Object.keys(migrations).sort() };
}

async function currentSchema(database: Database): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db);
  const schema = rows[0]?.schema;
  if (schema === undefined || schema === null) {
    throw new MigrationError('the PostgreSQL search_path names no existing schema; create it or fix the URL');
  }
  return schema;
}
