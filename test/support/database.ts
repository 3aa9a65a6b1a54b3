import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';

export interface TestDatabase {
  readonly database: Database;
  /** The settings that open this same database again (for a second server, the CLI, a restart). */
  readonly env: Record<string, string>;
  /** Closes the database and removes everything it held. */
  cleanup(): Promise<void>;
}

/** True when the suite runs against PostgreSQL (DATABASE_URL set), false for the SQLite default. */
export const onPostgres = process.env['DATABASE_URL'] !== undefined && process.env['DATABASE_URL'] !== '';

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env['DATABASE_URL'] });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, empty, migrated database for one test file: a temporary SQLite file, or with DATABASE_URL
 * a new schema in that PostgreSQL database, reached through the URL's search_path option, so
 * the production code path (DATABASE_URL) is what runs.
 */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  if (onPostgres) {
    const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
    await adminQuery(`create schema ${schema}`);
    const url = new URL(process.env['DATABASE_URL'] as string);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const env = { DATABASE_URL: url.toString() };
    const database = openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: '', poolSize: 4 });
    if (options.migrate !== false) await migrateToLatest(database);
    return {
      database,
      env,
      cleanup: async () => {
        await database.close().catch(() => undefined);
        await adminQuery(`drop schema ${schema} cascade`);
      },
    };
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-test-'));
  const database = openDatabase({ databaseUrl: undefined, dataDir });
  if (options.migrate !== false) await migrateToLatest(database);
  return {
    database,
    env: { MAINLINE_DATA_DIR: dataDir },
    cleanup: async () => {
      await database.close().catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
