// Each repository's quarantined test ids, kept in memory while nothing in its health changed: what
// getQuarantineConfig answers from (the CLI asks it on every failing CI run, often with thousands
// of test ids). Every write to test_cases.quarantined bumps the repository's `health_version` in
// its transaction (ingest, recompute, overrides: the seen-tests and page caches rely on the same
// rule), and each call reads the version from the database first, so a change made here or by
// another replica on the same database is seen by the next call: an index of another version is
// read again (one index-only walk of test_cases_quarantined), never used.
import type { Kysely } from 'kysely';
import type { Tables } from '../../store/schema.ts';
import { quarantinedIds } from '../../store/test-lists.ts';
import type { AppContext } from '../context.ts';

/** A repository's quarantined ids at one health version. */
export interface QuarantinedIndex {
  readonly version: number;
  /** In the quarantined list's order (name, then id, as the database orders them). */
  readonly ordered: readonly string[];
  readonly ids: ReadonlySet<string>;
}

/** Indexes of several repositories, at most `maxIds` ids in all, least recently used dropped first. */
export class QuarantineIndexCache {
  readonly #repos = new Map<string, QuarantinedIndex>();
  /** Repositories found with more quarantined tests than the cache holds (read from the database). */
  readonly #tooLarge = new Set<string>();
  #size = 0;

  constructor(private readonly maxIds: number) {}

  /**
   * The repository's index at `version` (read from the database before calling: ids loaded after it
   * are at least as new), loaded when not held at that version; undefined for a repository with more
   * quarantined tests than the cache can hold (its callers look the tests up instead).
   */
  async at(db: Kysely<Tables>, repoId: string, version: number): Promise<QuarantinedIndex | undefined> {
    const held = this.#repos.get(repoId);
    if (held !== undefined && held.version === version) {
      this.#repos.delete(repoId);
      this.#repos.set(repoId, held);
      return held;
    }
    if (this.#tooLarge.has(repoId)) return undefined;
    const ordered = await quarantinedIds(db, repoId);
    const index: QuarantinedIndex = { version, ordered, ids: new Set(ordered) };
    // A slower caller that read an older version does not replace a newer index.
    const now = this.#repos.get(repoId);
    if (now === undefined || now.version <= version) this.#keep(repoId, index);
    return index;
  }

  #keep(repoId: string, index: QuarantinedIndex): void {
    this.#forget(repoId);
    if (index.ordered.length > this.maxIds) {
      // Remembered for a bounded number of repositories; forgetting one only costs a walk again.
      if (this.#tooLarge.size >= 1000) this.#tooLarge.clear();
      this.#tooLarge.add(repoId);
      return;
    }
    this.#repos.set(repoId, index);
    this.#size += index.ordered.length;
    for (const id of this.#repos.keys()) {
      if (this.#size <= this.maxIds) break;
      this.#forget(id);
    }
  }

  #forget(repoId: string): void {
    const held = this.#repos.get(repoId);
    if (held === undefined) return;
    this.#size -= held.ordered.length;
    this.#repos.delete(repoId);
  }
}

const caches = new WeakMap<Kysely<Tables>, QuarantineIndexCache>();

/** The cache of the context's database, sized from its configuration (MAINLINE_QUARANTINE_INDEX_IDS). */
export function quarantineIndexCache(ctx: Pick<AppContext, 'db' | 'config'>): QuarantineIndexCache {
  let cache = caches.get(ctx.db);
  if (cache === undefined) {
    cache = new QuarantineIndexCache(ctx.config.quarantineIndexIds);
    caches.set(ctx.db, cache);
  }
  return cache;
}
