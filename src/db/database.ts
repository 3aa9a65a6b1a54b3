import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type Driver, Kysely, PostgresDialect, SqliteAdapter, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Tables } from '../store/schema.ts';
import { registerChangeStamp } from './change-stamp.ts';
import { enableCopyFrom } from './pg-copy.ts';
import { ReadWriteSqliteDriver } from './sqlite-driver.ts';
import { WalCheckpoints } from './wal-checkpoints.ts';

/** Which database engine a Database runs on. Query code is the same for both. */
export type Engine = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<Tables>;
  readonly engine: Engine;
  /** Where the data lives, safe to log (no password). */
  readonly location: string;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** Connections in the PostgreSQL pool. */
  readonly poolSize?: number;
}

/**
 * SQLite runs DDL inside transactions, but Kysely's adapter says it does not, which would make
 * its Migrator apply migrations outside a transaction. This adapter tells the truth, so a failed
 * migration leaves nothing half-applied on either engine.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }

  // Kysely serialises every statement behind one lock when an adapter says false, so reads would
  // wait for an open write transaction. Our driver (sqlite-driver.ts) has a reader connection beside
  // the writer and its own writer lock, which is the only serialisation SQLite needs.
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

class MainlineSqliteDialect extends SqliteDialect {
  readonly #driver: Driver;

  constructor(driver: Driver) {
    // The database given to the base class is never used: createDriver returns ours.
    super({ database: {} as never });
    this.#driver = driver;
  }

  override createDriver(): Driver {
    return this.#driver;
  }

  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** Statements kept prepared per connection; the chunked inserts of an upload reuse a handful. */
const STATEMENT_CACHE_SIZE = 200;

/**
 * Kysely prepares every statement it runs. Preparing a 1,000-row INSERT costs more than running it,
 * and an upload runs the same few shapes hundreds of times, so prepared statements are kept in a small
 * LRU keyed by their SQL text. Safe because better-sqlite3 runs one statement at a time on one
 * connection and nothing here streams results (Kysely's stream() would hold a cached statement busy).
 */
function cachePreparedStatements(handle: BetterSqlite3.Database): void {
  const prepare = handle.prepare.bind(handle);
  const cache = new Map<string, BetterSqlite3.Statement>();
  handle.prepare = ((source: string) => {
    const hit = cache.get(source);
    if (hit !== undefined) {
      cache.delete(source);
      cache.set(source, hit);
      return hit;
    }
    const statement = prepare(source);
    cache.set(source, statement);
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    return statement;
  }) as typeof handle.prepare;
}

/**
 * Page cache of the writer, in KiB: a large upload's transaction changes tens of MB of pages, and
 * SQLite's default 2 MB cache would spill them to the WAL (and read them back) mid-transaction.
 */
const WRITER_CACHE_KIB = 64 * 1024;

function openHandle(file: string, cacheKib?: number): BetterSqlite3.Database {
  const handle = new BetterSqlite3(file);
  // WAL lets readers run beside the writer. synchronous=NORMAL in WAL mode never loses a committed
  // transaction when the process is killed; only an OS crash or power loss can drop the last commits.
  handle.pragma('journal_mode = WAL');
  handle.pragma('synchronous = NORMAL');
  handle.pragma('foreign_keys = ON');
  handle.pragma('busy_timeout = 5000');
  if (cacheKib !== undefined) handle.pragma(`cache_size = -${cacheKib}`);
  cachePreparedStatements(handle);
  return handle;
}

function openSqlite(dataDir: string): Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'mainline.db');
  // The writer first: it creates the file and switches it to WAL before the reader opens it.
  const writer = openHandle(file, WRITER_CACHE_KIB);
  const reader = openHandle(file);
  // Checkpoints run on a thread of their own (wal-checkpoints.ts), not inside the writer's commits.
  writer.pragma('wal_autocheckpoint = 0');
  const checkpoints = new WalCheckpoints(file, () => {
    if (writer.open) writer.pragma('wal_autocheckpoint = 1000');
  });
  const driver = new ReadWriteSqliteDriver(
    () => ({ writer, reader }),
    () => checkpoints.written(),
  );
  const db = new Kysely<Tables>({ dialect: new MainlineSqliteDialect(driver) });
  // The reader sees every commit of another connection (the writer too) in its data_version.
  // A closed reader is asked about only once the statement fails: `open` is a call into the addon,
  // which cost a quarter as much as the pragma on every kept read.
  const dataVersion = reader.prepare('pragma data_version').pluck();
  registerChangeStamp(db, () => {
    try {
      return dataVersion.get() as number;
    } catch (error) {
      if (reader.open) throw error;
      return undefined;
    }
  });
  return {
    db,
    engine: 'sqlite',
    location: file,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await checkpoints.close();
      await db.destroy();
    },
  };
}

/** BIGINT (oid 20) holds epoch milliseconds and counts; both fit a JS number exactly. */
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as never,
};

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}

function openPostgres(url: string, poolSize: number): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that
  // would crash the process. The next query gets a fresh connection.
  pool.on('error', () => undefined);
  pool.on('connect', enableCopyFrom);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    engine: 'postgres',
    location: redactUrl(url),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/** Opens PostgreSQL when a URL is given, else the embedded SQLite file under dataDir. */
export function openDatabase(options: DatabaseOptions): Database {
  if (options.databaseUrl !== undefined) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openSqlite(options.dataDir);
}
