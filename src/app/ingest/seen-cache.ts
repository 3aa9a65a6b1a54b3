import type { SeenTestCase } from '../../store/test-cases.ts';
import { perDatabase } from '../per-database.ts';

/**
 * What ingestion last knew of a repository's tests, valid while the repository's `health_version` is
 * the one it was taken at. A repeated suite then costs map lookups instead of 100k primary-key
 * lookups. Every write to the columns of `SeenTestCase` bumps `health_version` in its transaction
 * (ingestion, recompute, flags, tickets, settings), so a version that moved, here or on another
 * replica, means "look them up again".
 */
export class SeenTestsCache {
  readonly #repos = new Map<string, { version: number; tests: Map<string, SeenTestCase> }>();
  #size = 0;

  constructor(private readonly maxTests: number) {}

  /** The tests known at `version`, or an empty map. */
  lookup(repoId: string, version: number): ReadonlyMap<string, SeenTestCase> {
    const entry = this.#repos.get(repoId);
    if (entry === undefined || entry.version !== version) return new Map();
    // Most recently used last.
    this.#repos.delete(repoId);
    this.#repos.set(repoId, entry);
    return entry.tests;
  }

  /**
   * After a commit: the repository is at `version`, these rows are current (the others of `base`
   * still are), and `changed` ids were rewritten by the transaction in ways `rows` does not show
   * (they are looked up again next time). `base` is what was valid at the version the transaction
   * started from. Rows are shared, never changed: whoever needs a different row makes a new one.
   */
  remember(
    repoId: string,
    version: number,
    base: ReadonlyMap<string, SeenTestCase>,
    rows: readonly SeenTestCase[],
    changed: ReadonlySet<string>,
  ): void {
    const entry = this.#repos.get(repoId);
    // Usually `base` is this repository's map itself: update it in place.
    const tests = entry !== undefined && entry.tests === base ? entry.tests : new Map(base);
    this.forget(repoId);
    for (const row of rows) tests.set(row.id, row);
    for (const id of changed) tests.delete(id);
    if (tests.size > this.maxTests) return;
    this.#repos.set(repoId, { version, tests });
    this.#size += tests.size;
    for (const id of this.#repos.keys()) {
      if (this.#size <= this.maxTests) break;
      this.forget(id);
    }
  }

  forget(repoId: string): void {
    const entry = this.#repos.get(repoId);
    if (entry === undefined) return;
    this.#size -= entry.tests.size;
    this.#repos.delete(repoId);
  }
}

/** Up to this many tests are remembered per process (~200 bytes each). */
const MAX_CACHED_TESTS = 500_000;

/** The cache of one database. */
export const seenTestsCache = perDatabase(() => new SeenTestsCache(MAX_CACHED_TESTS));
