import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';

/** One writer at a time: transactions and writing statements wait for it. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();

  /** Resolves, once the lock is ours, to the function that releases it. */
  lock(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ready = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => held);
    return ready;
  }
}

function run(handle: BetterSqlite3.Database, query: CompiledQuery): QueryResult<unknown> {
  const statement = handle.prepare(query.sql);
  const parameters = query.parameters as unknown[];
  if (statement.reader) return { rows: statement.all(...parameters) };
  const { changes, lastInsertRowid } = statement.run(...parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * A connection as Kysely sees it. Inside a transaction every statement runs on the writer (which the
 * transaction holds); outside one, a statement that only reads runs on the reader connection and
 * never waits, and one that writes takes the writer for itself.
 */
class RoutedConnection implements DatabaseConnection {
  readonly #driver: ReadWriteSqliteDriver;
  release: (() => void) | undefined;

  constructor(driver: ReadWriteSqliteDriver) {
    this.#driver = driver;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { writer, reader } = this.#driver.handles();
    if (this.release !== undefined) return run(writer, query) as QueryResult<R>;
    if (reader.prepare(query.sql).readonly) return run(reader, query) as QueryResult<R>;
    const release = await this.#driver.writeLock();
    try {
      const result = run(writer, query) as QueryResult<R>;
      this.#driver.written();
      return result;
    } finally {
      release();
    }
  }

  // biome-ignore lint/correctness/useYield: streaming is not used; Kysely requires the method
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries is not supported on SQLite here');
  }
}

/**
 * SQLite with two connections to one WAL database: a writer, held by one transaction (or writing
 * statement) at a time, and a reader for everything else. In WAL mode readers see the last committed
 * state and never wait for the writer, so a long upload transaction does not hold up reads (as long
 * as the writer's work yields to the event loop between statements, which the bulk paths do).
 */
export class ReadWriteSqliteDriver implements Driver {
  readonly #open: () => { writer: BetterSqlite3.Database; reader: BetterSqlite3.Database };
  #handles: { writer: BetterSqlite3.Database; reader: BetterSqlite3.Database } | undefined;
  readonly #mutex = new Mutex();
  readonly #written: () => void;

  /** `written` is called after each commit, and each write outside a transaction. */
  constructor(
    open: () => { writer: BetterSqlite3.Database; reader: BetterSqlite3.Database },
    written: () => void = () => {},
  ) {
    this.#open = open;
    this.#written = written;
  }

  written(): void {
    this.#written();
  }

  handles(): { writer: BetterSqlite3.Database; reader: BetterSqlite3.Database } {
    this.#handles ??= this.#open();
    return this.#handles;
  }

  writeLock(): Promise<() => void> {
    return this.#mutex.lock();
  }

  async init(): Promise<void> {
    this.handles();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    routed.release = await this.#mutex.lock();
    try {
      run(this.handles().writer, CompiledQuery.raw('begin'));
    } catch (error) {
      routed.release();
      routed.release = undefined;
      throw error;
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#end(connection as RoutedConnection, 'commit');
    this.#written();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#end(connection as RoutedConnection, 'rollback');
  }

  async #end(connection: RoutedConnection, command: 'commit' | 'rollback'): Promise<void> {
    try {
      run(this.handles().writer, CompiledQuery.raw(command));
    } finally {
      connection.release?.();
      connection.release = undefined;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    // A transaction that neither committed nor rolled back (should not happen): free the writer.
    if (routed.release !== undefined) {
      if (this.handles().writer.inTransaction) run(this.handles().writer, CompiledQuery.raw('rollback'));
      routed.release();
      routed.release = undefined;
    }
  }

  async destroy(): Promise<void> {
    this.#handles?.reader.close();
    this.#handles?.writer.close();
    this.#handles = undefined;
  }
}
