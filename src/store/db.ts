import { CompiledQuery, type Kysely, PostgresAdapter, type Transaction } from 'kysely';
import type { Tables } from './schema.ts';

/** Anything queries can run on: the database itself or an open transaction. */
export type Queryable = Kysely<Tables> | Transaction<Tables>;

/**
 * Splits a list for statements with one bound parameter per item: SQLite allows 32,766 parameters
 * per statement and PostgreSQL 65,535; 500 keeps every statement far below both.
 */
export function chunked<T>(items: readonly T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Lets the event loop run (other requests, timers) between the statements of a long piece of work.
 * SQLite statements run synchronously; without this, a 100k-row upload would hold every other request
 * for seconds even though reads use a connection of their own.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

const insertTexts = new Map<string, string>();

/**
 * Inserts many rows of one shape: the statement text for a chunk is built once and reused (the
 * SQLite driver then reuses its prepared statement), which spares the query builder's per-value work
 * on the ingest path (100k rows per large upload). Rows must all have the same keys. With
 * `ignoreConflicts`, rows whose key is taken are skipped. Returns the number of rows inserted.
 */
export async function insertMany<T extends Record<string, unknown>>(
  db: Queryable,
  table: keyof Tables & string,
  rows: readonly T[],
  options: { chunkRows?: number; ignoreConflicts?: boolean } = {},
): Promise<number> {
  const first = rows[0];
  if (first === undefined) return 0;
  const columns = Object.keys(first);
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const ignore = options.ignoreConflicts === true;
  let inserted = 0;
  for (const part of chunked(rows, options.chunkRows ?? 1000)) {
    const key = `${postgres ? 'pg' : 'sqlite'}|${table}|${columns.join(',')}|${part.length}|${ignore}`;
    let text = insertTexts.get(key);
    if (text === undefined) {
      let n = 0;
      const tuple = () => `(${columns.map(() => (postgres ? `$${++n}` : '?')).join(',')})`;
      text = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(',')}) values ${part.map(tuple).join(',')}${ignore ? ' on conflict do nothing' : ''}`;
      insertTexts.set(key, text);
    }
    const params: unknown[] = [];
    for (const row of part) for (const c of columns) params.push(row[c] ?? null);
    const result = await db.executeQuery(CompiledQuery.raw(text, params));
    inserted += Number(result.numAffectedRows ?? 0n);
    await yieldToEventLoop();
  }
  return inserted;
}
