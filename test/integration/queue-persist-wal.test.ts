// SQLite: a checkpoint that copies the whole WAL makes the next commit start the WAL over, and SQLite
// syncs the restarted WAL's header in that commit, so every queue event after a pause paid an fsync
// (18–33 ms medians in bench/queue-persist.ts on a busy disk). The checkpoint thread now leaves a small
// WAL alone (src/db/wal-checkpoint-thread.mjs); a big one is still copied (wal-checkpoints.test.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { onPostgres } from '../support/database.ts';

const dirs: string[] = [];
const opened: Database[] = [];
afterEach(async () => {
  for (const d of opened.splice(0)) await d.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Frames in the WAL and how many of them a checkpoint copied, as a connection of its own sees them. */
function walFrames(file: string): { log: number; checkpointed: number } {
  const peek = new BetterSqlite3(file);
  try {
    const [wal] = peek.pragma('wal_checkpoint(NOOP)') as { log: number; checkpointed: number }[];
    if (wal === undefined) throw new Error('no WAL information');
    return { log: wal.log, checkpointed: wal.checkpointed };
  } finally {
    peek.close();
  }
}

describe.skipIf(onPostgres)('the WAL after a small write and a pause (SQLite)', () => {
  it('is left as it is, so the next write appends to it instead of starting it over', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-wal-pause-'));
    dirs.push(dataDir);
    const database = openDatabase({ databaseUrl: undefined, dataDir });
    opened.push(database);
    const file = path.join(dataDir, 'mainline.db');
    await sql`create table events (id integer primary key, body text not null)`.execute(database.db);
    await sql`insert into events (body) values (${'x'.repeat(100)})`.execute(database.db);
    const written = walFrames(file);
    expect(written.log).toBeGreaterThan(0);
    // Several times the checkpoint thread's delay after the last write: it was asked and has answered.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(walFrames(file)).toEqual({ log: written.log, checkpointed: 0 });
    await sql`insert into events (body) values (${'y'.repeat(100)})`.execute(database.db);
    const after = walFrames(file);
    expect(after.log).toBeGreaterThan(written.log);
    const rows = await sql<{ n: number }>`select count(*) as n from events`.execute(database.db);
    expect(rows.rows[0]?.n).toBe(2);
  });
});
