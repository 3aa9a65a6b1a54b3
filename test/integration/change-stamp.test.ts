// The SQLite change stamp (db/change-stamp.ts, registered by db/database.ts): it changes with every
// commit of any connection to the file (this database's writer, or another process's connection), not
// otherwise, and is absent once the database is closed (callers then read as without a stamp).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { changeStamp } from '../../src/db/change-stamp.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';

describe('SQLite change stamp', () => {
  let dir: string | undefined;
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('changes on every commit of any connection, and is absent once closed', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-stamp-'));
    database = openDatabase({ databaseUrl: undefined, dataDir: dir });
    const db = database.db;
    await sql`create table t (x integer)`.execute(db);
    const first = changeStamp(db);
    expect(first).toBeTypeOf('number');
    expect(changeStamp(db)).toBe(first);
    await sql`select count(*) from t`.execute(db);
    expect(changeStamp(db)).toBe(first);

    await sql`insert into t values (1)`.execute(db);
    const afterOwn = changeStamp(db);
    expect(afterOwn).not.toBe(first);

    // Another connection (as another process would have) commits to the same file.
    const other = new BetterSqlite3(path.join(dir, 'mainline.db'));
    try {
      other.prepare('insert into t values (2)').run();
    } finally {
      other.close();
    }
    expect(changeStamp(db)).not.toBe(afterOwn);

    await database.close();
    database = undefined;
    expect(changeStamp(db)).toBeUndefined();
  });
});
