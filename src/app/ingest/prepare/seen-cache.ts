import { SEEN_COLUMNS, type SeenTestCase, seenOf, type TestCaseRow } from '../../../store/tests/cases.ts';
import type { KnownTests } from './types.ts';

/** Nothing known: a repository not stored yet, or at a version the cache does not hold. */
export const NOTHING_KNOWN: KnownTests = { tests: new Map(), full: new Map() };

/** A whole row counts as this many seen rows toward the bound (monitor states, reasons). */
const FULL_ROW_WEIGHT = 5;

/** A whole row with the seen columns of `seen` (the same row when they are the same). */
export function withSeen(row: TestCaseRow, seen: SeenTestCase): TestCaseRow {
  for (const column of SEEN_COLUMNS) if (row[column] !== seen[column]) return { ...row, ...seen };
  return row;
}

/**
 * What ingestion last knew of a repository's tests, valid while the repository's `health_version` is
 * the one it was taken at. A repeated suite then costs map lookups instead of 100k primary-key
 * lookups, and its failing tests (re-evaluated by every upload) no whole-row lookups. Every write to
 * a test_cases row bumps `health_version` in its transaction (ingestion, recompute, flags, tickets,
 * settings), so a version that moved, here or on another replica, means "look them up again".
 */
export class SeenTestsCache {
  readonly #repos = new Map<
    string,
    { version: number; tests: Map<string, SeenTestCase>; full: Map<string, TestCaseRow> }
  >();
  #size = 0;

  /** `maxTests`: tests remembered at most (MAINLINE_SEEN_TESTS_CACHE), a whole row counting as several. */
  constructor(private readonly maxTests: number) {}

  /** The tests known at `version` (empty maps when it is not the version remembered). */
  lookup(repoId: string, version: number): KnownTests {
    const entry = this.#repos.get(repoId);
    if (entry === undefined || entry.version !== version) return NOTHING_KNOWN;
    // Most recently used last.
    this.#repos.delete(repoId);
    this.#repos.set(repoId, entry);
    return entry;
  }

  /**
   * After a commit: the repository is at `version`, these seen `rows` and whole `evaluated` rows are
   * current (the others of `base` still are, except whole rows of tests among `rows`, which are
   * dropped). `base` is what was valid at the version the transaction started from. Rows are shared,
   * never changed: whoever needs a different row makes a new one.
   */
  remember(
    repoId: string,
    version: number,
    base: KnownTests,
    rows: readonly SeenTestCase[],
    evaluated: readonly TestCaseRow[],
  ): void {
    const entry = this.#repos.get(repoId);
    // Usually `base` is this repository's entry itself: update it in place.
    const own = entry !== undefined && entry.tests === base.tests;
    const tests = own ? entry.tests : new Map(base.tests);
    const full = own ? entry.full : new Map(base.full);
    this.forget(repoId);
    for (const row of rows) {
      tests.set(row.id, row);
      full.delete(row.id);
    }
    for (const row of evaluated) {
      tests.set(row.id, seenOf(row));
      full.set(row.id, row);
    }
    const size = tests.size + FULL_ROW_WEIGHT * full.size;
    if (size > this.maxTests) return;
    this.#repos.set(repoId, { version, tests, full });
    this.#size += size;
    for (const id of this.#repos.keys()) {
      if (this.#size <= this.maxTests) break;
      this.forget(id);
    }
  }

  forget(repoId: string): void {
    const entry = this.#repos.get(repoId);
    if (entry === undefined) return;
    this.#size -= entry.tests.size + FULL_ROW_WEIGHT * entry.full.size;
    this.#repos.delete(repoId);
  }
}
