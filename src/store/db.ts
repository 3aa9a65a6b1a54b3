import type { Kysely, Transaction } from 'kysely';
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
