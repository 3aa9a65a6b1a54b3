// What tests of several server processes on one database use: a second handle on the test database
// (another replica's pool, which this process's caches never hear of) and the PR snapshot a
// pr_submitted event carries.
import { type Database, openDatabase } from '../../src/db/database.ts';
import type { TestDatabase } from './database.ts';

/** Another process's handle on `db`: its own pool of two connections (PostgreSQL). Close it after use. */
export function replicaHandle(db: TestDatabase): Database {
  return openDatabase({
    databaseUrl: db.env['DATABASE_URL'],
    dataDir: db.env['MAINLINE_DATA_DIR'] ?? '',
    poolSize: 2,
  });
}

/** A 40-hex-digit SHA: `n` in hex, padded with `fill`. */
export const fakeSha = (n: number, fill = 'c'): string => n.toString(16).padStart(40, fill);

/** Mergeable PR #n onto main, as a pr_submitted event carries it (SHAs padded with `fill`). */
export const submittedPr = (n: number, fill = 'c') => ({
  number: n,
  title: `PR ${n}`,
  author: 'dev',
  headSha: fakeSha(n, fill),
  baseSha: fakeSha(1, fill),
  baseBranch: 'main',
  mergeability: 'mergeable' as const,
});
