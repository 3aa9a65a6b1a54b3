// The WAL checkpoint thread of an SQLite database (wal-checkpoints.ts): copies committed pages from
// the WAL into the database file when asked, on a connection of its own, so the request thread's
// commits never do it. PASSIVE: it never waits for, nor blocks, the writer or the readers.
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

const db = new BetterSqlite3(workerData.file);
db.pragma('busy_timeout = 5000');
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
      db.pragma('wal_checkpoint(PASSIVE)');
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
