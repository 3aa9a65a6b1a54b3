// The WAL checkpoint thread of an SQLite database (wal-checkpoints.ts): copies committed pages from
// the WAL into the database file when asked, on a connection of its own, so the request thread's
// commits never do it, once the WAL holds MIN_FRAMES frames not copied yet. PASSIVE: it never waits
// for, nor blocks, the writer or the readers.
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

const db = new BetterSqlite3(workerData.file);
db.pragma('busy_timeout = 5000');
/** Frames left in the WAL uncopied before a checkpoint is worth it: SQLite's own automatic threshold. */
const MIN_FRAMES = 1000;
let running = false;
let again = false;

function checkpoint() {
  if (running) {
    again = true;
    return;
  }
  running = true;
  try {
    do {
      again = false;
      // A checkpoint that copies the whole WAL makes the next commit start the WAL over, and SQLite
      // syncs a restarted WAL's header inside that commit: an fsync (~1 ms on a quiet disk, tens of ms
      // on a busy one) in the first write after every pause. A small WAL is left to grow, so that
      // happens once per MIN_FRAMES frames written. (An SQLite without NOOP reads it as PASSIVE.)
      const [wal] = db.pragma('wal_checkpoint(NOOP)');
      if (wal === undefined || wal.log - wal.checkpointed >= MIN_FRAMES) db.pragma('wal_checkpoint(PASSIVE)');
    } while (again);
  } catch (error) {
    parentPort?.postMessage({ kind: 'failed', message: String(error) });
  } finally {
    running = false;
  }
}

parentPort?.on('message', (message) => {
  if (message === 'checkpoint') checkpoint();
  else if (message === 'close') {
    db.close();
    parentPort?.close();
  }
});
