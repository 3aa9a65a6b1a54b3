// Whether a database may have changed since a moment, without a query through Kysely: on SQLite, the
// reader connection's `PRAGMA data_version`, which changes whenever any other connection commits
// (this process's writer, the CLI, another process on the same file) and never for anything else a
// cache could care about. Read before a value, it names the state the value was read in: while it
// has not changed, nothing was committed since, so the value is still the database's
// (app/health/read-answers.ts UnchangedReads). PostgreSQL has no such cheap local check (another
// replica's commit is seen only by asking the server): no stamp there, and callers read as before.
// Kept per database object in a WeakMap (design.md: per-object WeakMaps are what may stay at module level).

const stamps = new WeakMap<object, () => number | undefined>();

/** Registers how `db` (the root Kysely object of an open database) reads its stamp. */
export function registerChangeStamp(db: object, read: () => number | undefined): void {
  stamps.set(db, read);
}

/**
 * The stamp of `db` now, synchronously; undefined when it has none (PostgreSQL, a transaction, a
 * closed database). Equal stamps of one `db` mean nothing was committed in between.
 */
export function changeStamp(db: object): number | undefined {
  return stamps.get(db)?.();
}
