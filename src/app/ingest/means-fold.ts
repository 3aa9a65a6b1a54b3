// Folding the uploads listed for the hour rows and the slowest tests' means (store/uploads/duration-writes.ts)
// outside a request: after an upload is answered (what the listed uploads call for: their counts every
// 8, everything every 32), a moment after a repository's last upload (what a burst left listed), and
// in the periodic health pass (app/health/sweep.ts) for every repository with uploads listed. The list
// is durable (migrations 0030, 0035), so a fold that fails or never runs loses nothing: the next one,
// or any read of the hour rows or the means, which folds before it reads, adds what is left.
import type { Kysely } from 'kysely';
import type { Tables } from '../../store/schema.ts';
import {
  foldDue,
  foldPendingUploads,
  foldQuiet,
  reposWithPendingMeans,
} from '../../store/uploads/duration-writes.ts';

type Log = { warn(o: object, m: string): void };

/** Repositories and uploads one periodic pass folds at most (the rest wait for the next pass). */
const PASS_REPOS = 200;
const PASS_UPLOADS = 2_000;

/**
 * 'due': what the listed uploads call for (foldDue); 'quiet': what a repository gone quiet folds
 * (foldQuiet: everything from 8 listed on, else their counts), at least what 'due' would.
 */
type Fold = 'due' | 'quiet';

/**
 * The process's background folds (app/caches.ts, one per AppContext): one fold per repository at a
 * time; asked again while one runs, it folds once more after it (the idle fold if either asked for it).
 * A failure is logged (the server's logger once the HTTP app or the periodic pass sets `log`) and
 * leaves the uploads listed. `close` (the HTTP app's onClose) drops the idle timers and waits for
 * the folds running.
 */
export class MeansFolds {
  log: Log = { warn: (o, m) => console.warn(m, o) };
  readonly #running = new Map<string, { done: Promise<void>; again: Fold | undefined }>();
  readonly #idle = new Map<string, { timer: NodeJS.Timeout; db: Kysely<Tables> }>();
  #closed = false;

  /** Folds what the repository's listed uploads call for, in the background (not awaited). */
  later(db: Kysely<Tables>, repoId: string): void {
    this.#start(db, repoId, 'due');
  }

  /**
   * (Re)arms the repository's idle fold: what it has listed is folded (foldQuiet) `ms` after the last call
   * (MAINLINE_FOLD_IDLE_MS: long enough that a burst's uploads do not each fold, short enough that
   * the first read after it rarely has to), unless another upload comes first; 0: none. The timer
   * does not keep the process alive.
   */
  idle(db: Kysely<Tables>, repoId: string, ms: number): void {
    const armed = this.#idle.get(repoId);
    if (armed !== undefined) clearTimeout(armed.timer);
    if (this.#closed || ms <= 0) {
      this.#idle.delete(repoId);
      return;
    }
    const timer = setTimeout(() => {
      this.#idle.delete(repoId);
      this.#start(db, repoId, 'quiet');
    }, ms);
    timer.unref();
    this.#idle.set(repoId, { timer, db });
  }

  /** Runs the armed idle folds now and waits for them (tests; nothing depends on their delay). */
  async foldIdleNow(): Promise<void> {
    const armed = [...this.#idle.entries()];
    this.#idle.clear();
    for (const [repoId, { timer, db }] of armed) {
      clearTimeout(timer);
      this.#start(db, repoId, 'quiet');
    }
    await this.settled();
  }

  /** Repositories with an idle fold armed. */
  get idleArmed(): number {
    return this.#idle.size;
  }

  /** Drops the idle timers, starts no fold any more, and waits for the ones running. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const { timer } of this.#idle.values()) clearTimeout(timer);
    this.#idle.clear();
    await this.settled();
  }

  #start(db: Kysely<Tables>, repoId: string, fold: Fold): void {
    if (this.#closed) return;
    const current = this.#running.get(repoId);
    if (current !== undefined) {
      current.again = current.again === 'quiet' || fold === 'quiet' ? 'quiet' : 'due';
      return;
    }
    const entry: { done: Promise<void>; again: Fold | undefined } = {
      done: Promise.resolve(),
      again: undefined,
    };
    entry.done = (async () => {
      // After the answer is on its way: on SQLite every statement runs on this thread, and a fold
      // started at once would run its statements before the answer is written.
      await new Promise((resolve) => setImmediate(resolve));
      let next: Fold | undefined = fold;
      while (next !== undefined && !this.#closed) {
        entry.again = undefined;
        // 'due' counts again first: uploads listed while a fold ran are folded only once enough are
        // (the fold they were asked for after may have taken them), not a few at a time.
        const run = next === 'quiet' ? foldQuiet(db, repoId) : foldDue(db, repoId);
        await run.catch((err: unknown) => this.#failed(err, repoId));
        next = entry.again;
      }
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
