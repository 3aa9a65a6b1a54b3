import type { Kysely } from 'kysely';
import type { Tables } from '../store/schema.ts';

/**
 * One `T` per open database, made on first use (an app, or a test, opens its own database, so
 * in-process caches never mix two databases' data).
 */
export function perDatabase<T>(make: () => T): (db: Kysely<Tables>) => T {
  const made = new WeakMap<Kysely<Tables>, T>();
  return (db) => {
    let value = made.get(db);
    if (value === undefined) {
      value = make();
      made.set(db, value);
    }
    return value;
  };
}
