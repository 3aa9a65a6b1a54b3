import type { Kysely, Transaction } from 'kysely';
import type { Queryable } from '../db/bulk.ts';
import type { Tables } from './schema.ts';

/**
 * Runs `work` in one transaction, so use cases can group writes without holding a query builder:
 * a new transaction on the database, or the caller's own when `db` already is one.
 */
export function inTransaction<T>(db: Queryable, work: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
  return db.isTransaction
    ? work(db as Transaction<Tables>)
    : (db as Kysely<Tables>).transaction().execute(work);
}
