// The dashboard's failing-tests lists, kept in memory by the repository's read version (rollups.ts
// `readVersion`: its health_version, which every ingest bumps in the transaction that adds to the
// failure rollups, and its oldest upload, which retention changes when it takes an upload back out of
// them). Each list is every test that failed in a window of whole hours, in the page's order, with
// its failures: grouping the window's failure rollups is the page's cost (two groupings a request
// before: the count and the page), so a repository's list is grouped once per version and window and
// every page of it, and its count, is a slice. The version is read from the database on every
// request, so replicas sharing one PostgreSQL stay exact; a list loaded after reading the version is
// at least as new as it. The rows of a page (the test rows' status and quarantine, the latest failure)
// are kept with the list too, a few pages a list: every write to test_cases bumps health_version,
// so they cannot change while the version stands. One per app (app/caches.ts), holding at most
// MAINLINE_KEPT_FAILING_TESTS entries in all (a list counts its tests, one more, and 50 a page it
// keeps); a longer list is grouped on every request.
import { WeighedLru } from '../../lib/weighed-lru.ts';
import type { FailingEntry } from '../../store/dashboard/failing.ts';

/** Pages of rows kept with a list, the most recently used last. */
const PAGES_PER_LIST = 8;
/** What a kept page counts towards the limit. */
const PAGE_WEIGHT = 50;

/** A list at one version, with the rows of some of its pages. */
export interface KeptList<R> {
  readonly version: string;
  readonly entries: readonly FailingEntry[];
  readonly pages: Map<number, readonly R[]>;
}

export class FailingLists<R> {
  readonly #lists: WeighedLru<KeptList<R>>;
  /** Lists being loaded, by key and version: concurrent requests of a new version share one grouping. */
  readonly #loading = new Map<string, Promise<KeptList<R>>>();

  constructor(maxEntries: number) {
    this.#lists = new WeighedLru(maxEntries);
  }

  /**
   * The list named `key` (repository and window) at `version` (read before calling), loaded and kept
   * when not held at that version.
   */
  async at(key: string, version: string, load: () => Promise<readonly FailingEntry[]>): Promise<KeptList<R>> {
    const held = this.#lists.get(key);
    if (held !== undefined && held.version === version) return held;
    const loadKey = `${key}\n${version}`;
    const pending = this.#loading.get(loadKey);
    if (pending !== undefined) return pending;
    const loading = load().then((entries): KeptList<R> => ({ version, entries, pages: new Map() }));
    this.#loading.set(loadKey, loading);
    try {
      const list = await loading;
      this.#lists.set(key, list, weight(list));
      return list;
    } finally {
      this.#loading.delete(loadKey);
    }
  }

  /** The rows of page `page` of the list `at` gave for `key`, built and kept with it when not held. */
  async page(
    key: string,
    list: KeptList<R>,
    page: number,
    build: () => Promise<readonly R[]>,
  ): Promise<readonly R[]> {
    const held = list.pages.get(page);
    if (held !== undefined) {
      list.pages.delete(page);
      list.pages.set(page, held);
      return held;
    }
    const rows = await build();
    if (list.pages.size >= PAGES_PER_LIST) list.pages.delete(list.pages.keys().next().value as number);
    list.pages.set(page, rows);
    // Weighed again with its pages (or not kept, if it was dropped meanwhile).
    if (this.#lists.get(key) === list) this.#lists.set(key, list, weight(list));
    return rows;
  }
}

/** What a list counts towards the limit: its tests, one more, and PAGE_WEIGHT a kept page. */
function weight(list: KeptList<unknown>): number {
  return list.entries.length + 1 + PAGE_WEIGHT * list.pages.size;
}
