// SQLite: commits never copy the WAL into the database file themselves; the checkpoint thread does
// it shortly after, and if that thread cannot work the writer checkpoints again on its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { WalCheckpoints } from '../../src/db/wal-checkpoints.ts';
import { onPostgres } from '../support/database.ts';

const dirs: string[] = [];
const opened: Database[] = [];
afterEach(async () => {
  for (const d of opened.splice(0)) await d.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function freshSqlite(): { database: Database; file: string } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-wal-'));
  dirs.push(dataDir);
  const database = openDatabase({ databaseUrl: undefined, dataDir });
  opened.push(database);
  return { database, file: path.join(dataDir, 'mainline.db') };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting until ${what}`);
}

describe.skipIf(onPostgres)('WAL checkpoints off the request thread (SQLite)', () => {
  it('leaves a big commit in the WAL, then the checkpoint thread moves it into the database file', async () => {
    const { database, file } = freshSqlite();
    await sql`create table blobs (id integer primary key, body text not null)`.execute(database.db);
    const before = fs.statSync(file).size;
    await database.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 200; i++)
        await sql`insert into blobs (body) values (${'x'.repeat(50_000)})`.execute(trx);
    });
    // Right after the commit: 10 MB in the WAL, the database file as it was (no checkpoint in the commit).
    expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(10_000_000);
    expect(fs.statSync(file).size).toBeLessThan(before + 1_000_000);
    await until(() => fs.statSync(file).size > before + 10_000_000, 'the database file holds the commit');
    const rows = await sql<{ n: number }>`select count(*) as n from blobs`.execute(database.db);
    expect(rows.rows[0]?.n).toBe(200);
  });

  it('turns the writer’s own checkpoints back on when the thread cannot work', async () => {
    let fellBack = false;
    const checkpoints = new WalCheckpoints('/nonexistent-dir/mainline.db', () => {
      fellBack = true;
    });
    await until(() => fellBack, 'the fallback was called');
    await checkpoints.close();
  });
});
