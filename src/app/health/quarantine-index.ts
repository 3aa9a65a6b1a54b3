// Each repository's quarantined test ids, kept in memory while nothing in its health changed: what
// getQuarantineConfig answers from (the CLI asks it on every failing CI run, often with thousands
// of test ids). Every write to test_cases bumps the repository's `health_version` in its
// transaction (the store's writers do so themselves: store/tenancy/repos.ts writeTestHealth), and each call
// reads the version from the database first (on SQLite, again only once something was committed since:
// read-answers.ts UnchangedReads), so a change made here or by
// another replica on the same database is seen by the next call: an index of another version is
// read again (one index-only walk of test_cases_quarantined), never used. One of each per app
// (app/caches.ts), sized by MAINLINE_QUARANTINE_INDEX_IDS.
import type { Kysely } from 'kysely';
import type { Tables } from '../../store/schema.ts';
import { quarantinedIds } from '../../store/tests/lists.ts';

/** A repository's quarantined ids at one health version. */
export interface QuarantinedIndex {
  readonly version: number;
  /** In the quarantined list's order (name, then id, as the database orders them). */
  readonly ordered: readonly string[];
  readonly ids: ReadonlySet<string>;
  /** quarantinedAmong's answers for the frozen id lists of kept bodies, while the index is current. */
  readonly among: WeakMap<readonly string[], readonly string[]>;
  /**
   * getQuarantineConfig's answer without identifiers, as JSON bytes, by `isDisabled` (0: false, 1:
   * true): made on first use (allQuarantinedBytes), kept with the index, so a new version makes it again.
   */
  readonly allBytes: [Buffer | undefined, Buffer | undefined];
}

/**
 * The JSON bytes of `{ isDisabled, testIds }` with the index's first `limit` ids, as the route's
 * serializer writes them: a repository with thousands of quarantined tests (95 KB of ids) is answered
 * without copying and encoding the list on every call.
 */
export function allQuarantinedBytes(index: QuarantinedIndex, isDisabled: boolean, limit: number): Buffer {
  const at = isDisabled ? 1 : 0;
  const kept = index.allBytes[at];
  if (kept !== undefined) return kept;
  const testIds = index.ordered.length > limit ? index.ordered.slice(0, limit) : index.ordered;
  const bytes = Buffer.from(JSON.stringify({ isDisabled, testIds }));
  index.allBytes[at] = bytes;
  return bytes;
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Which of `ids` the index holds, in id order. For a frozen list (IdentifierIds.uniqueIds of a kept
 * body) the answer is kept with the index: the CLI asks about the same tests run after run, and the
 * filter and sort of 1,000 ids were the largest part left of the call's own code; an index is never
 * changed, and a new health version is a new index, so a kept answer is always this version's.
 */
export function quarantinedAmong(index: QuarantinedIndex, ids: readonly string[]): readonly string[] {
  const kept = index.among.get(ids);
  if (kept !== undefined) return kept;
  const found = Object.freeze(ids.filter((id) => index.ids.has(id)).sort(byId));
  if (Object.isFrozen(ids)) index.among.set(ids, found);
  return found;
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
    const index: QuarantinedIndex = {
      version,
      ordered,
      ids: new Set(ordered),
      among: new WeakMap(),
      allBytes: [undefined, undefined],
    };
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

/**
 * The test ids of identifiers getQuarantineConfig was asked about, per repository (and the org slug
 * and repository name that go into an id): hashing 1,000 identifiers was most of a call's time, and
 * the uploader asks about the same tests run after run. An id depends only on what its key holds,
 * so a remembered one is always right; at most `max` in all, least recently used repository dropped
 * first.
 */
export class IdentifierIds {
  readonly #scopes = new Map<string, Map<string, string>>();
  readonly #lists = new WeakMap<readonly unknown[], { scope: string; ids: readonly string[] }>();
  #size = 0;

  constructor(private readonly max: number) {}

  /**
   * The distinct ids of `list`'s identifiers in first-seen order, as `ids` makes them. A frozen list
   * is one the HTTP layer keeps parsed and hands to every request sending the same body
   * (http/body-checks.ts): its ids are kept with it, weakly, for its scope.
   */
  uniqueIds(
    scope: string,
    list: readonly unknown[],
    key: (i: number) => string,
    make: (i: number) => string,
  ): readonly string[] {
    const shared = this.max > 0 && Object.isFrozen(list);
    const held = shared ? this.#lists.get(list) : undefined;
    if (held !== undefined && held.scope === scope) return held.ids;
    const ids = Object.freeze([...new Set(this.ids(scope, list.length, key, make))]);
    if (shared) this.#lists.set(list, { scope, ids });
    return ids;
  }

  /** The id of each key (`key(i)`), remembered or made by `make(i)` and remembered. */
  ids(scope: string, count: number, key: (i: number) => string, make: (i: number) => string): string[] {
    if (this.max === 0) return Array.from({ length: count }, (_, i) => make(i));
    let known = this.#scopes.get(scope);
    if (known === undefined) known = new Map();
    else this.#scopes.delete(scope);
    this.#scopes.set(scope, known);
    const out = new Array<string>(count);
    for (let i = 0; i < count; i++) {
      const k = key(i);
      let id = known.get(k);
      if (id === undefined) {
        id = make(i);
        if (this.#size >= this.max) this.#makeRoom(scope);
        if (this.#size < this.max) {
          known.set(k, id);
          this.#size++;
        }
      }
      out[i] = id;
    }
    return out;
  }

  /** Drops the least recently used scopes other than `keep` until there is room for one id. */
  #makeRoom(keep: string): void {
    for (const [scope, ids] of this.#scopes) {
      if (this.#size < this.max || scope === keep) return;
      this.#scopes.delete(scope);
      this.#size -= ids.size;
    }
  }
}
