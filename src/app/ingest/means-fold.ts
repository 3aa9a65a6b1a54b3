// Folding the uploads listed for the slowest tests' means and the hour rows (store/uploads/duration-writes.ts
// foldPendingUploads) outside a request: after an upload is answered, and in the periodic health pass
// (app/health/sweep.ts) for every repository with uploads listed. The list is durable (migrations
// 0030, 0035), so a fold that fails or never runs loses nothing: the next one, or any read of the
// hour rows or the means, which folds before it reads, adds what is left.
import type { Kysely } from 'kysely';
import type { Tables } from '../../store/schema.ts';
import { foldPendingUploads, reposWithPendingMeans } from '../../store/uploads/duration-writes.ts';

type Log = { warn(o: object, m: string): void };

/** Repositories and uploads one periodic pass folds at most (the rest wait for the next pass). */
const PASS_REPOS = 200;
const PASS_UPLOADS = 2_000;

/**
 * The process's folds of the duration means (app/caches.ts, one per AppContext): one fold per
 * repository at a time; asked again while one runs, it folds once more after it. A failure is
 * logged (the server's logger once the HTTP app or the periodic pass sets `log`) and leaves the
 * uploads listed.
 */
export class MeansFolds {
  log: Log = { warn: (o, m) => console.warn(m, o) };
  readonly #running = new Map<string, { done: Promise<void>; again: boolean }>();

  /** Folds the repository's listed uploads in the background (not awaited). */
  later(db: Kysely<Tables>, repoId: string): void {
    const current = this.#running.get(repoId);
    if (current !== undefined) {
      current.again = true;
      return;
    }
    const entry = { done: Promise.resolve(), again: false };
    entry.done = (async () => {
      // After the answer is on its way: on SQLite every statement runs on this thread, and a fold
      // started at once would run its statements before the answer is written.
      await new Promise((resolve) => setImmediate(resolve));
      do {
        entry.again = false;
        await foldPendingUploads(db, repoId).catch((err: unknown) => this.#failed(err, repoId));
      } while (entry.again);
      this.#running.delete(repoId);
    })();
    this.#running.set(repoId, entry);
  }

  /** Resolves once the background folds running (and those they start) are done. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running.values()].map((e) => e.done));
  }

  /**
   * Folds the listed uploads of every repository that has some, up to PASS_UPLOADS per pass; a
   * repository whose fold fails is logged and skipped. Returns the uploads folded and the failures.
   */
  async foldAll(db: Kysely<Tables>): Promise<{ uploads: number; failures: number }> {
    let uploads = 0;
    let failures = 0;
    for (const repoId of await reposWithPendingMeans(db, PASS_REPOS)) {
      if (uploads >= PASS_UPLOADS) break;
      try {
        uploads += await foldPendingUploads(db, repoId, PASS_UPLOADS - uploads);
      } catch (err) {
        failures++;
        this.#failed(err, repoId);
      }
    }
    return { uploads, failures };
  }

  #failed(err: unknown, repoId: string): void {
    this.log.warn({ err, repoId }, 'folding the uploads listed for the duration means failed');
  }
}
