// The dashboard's failing-tests pages, kept in memory by the repository's read version (rollups.ts
// `readVersion`: its health_version, which every ingest bumps in the transaction that adds to the
// failure rollups and the kept windows, and its oldest upload, which retention changes when it takes
// an upload back out of them). A page is a range read of the window's kept table
// (store/dashboard/failing.ts) and the rows of its tests (their status and quarantine, the latest
// failure); kept here, a repeated view costs the version read alone. Every write to test_cases bumps
// health_version, so a page's rows cannot change while the version stands; the key names the
// window's hours, so a page moves on with the clock. The version is read from the database on every
// request, so replicas sharing one PostgreSQL stay exact; a page loaded after reading the version is
// at least as new as it. One per app (app/caches.ts), holding at most MAINLINE_KEPT_FAILING_TESTS
// entries in all (a list counts one, and 50 a page it keeps, at most 8 pages a list).
import { WeighedLru } from '../../lib/weighed-lru.ts';

/** Pages of rows kept with a list, the most recently used last. */
const PAGES_PER_LIST = 8;
/** Rows of a page, and what a kept page counts towards the limit. */
const PAGE_ROWS = 50;

/** A page of a list: the list's count, the page (clamped to the last) and its rows. */
export interface KeptPage<R> {
  readonly total: number;
  readonly page: number;
  readonly rows: readonly R[];
}

/** A list at one version, with its count and some of its pages. */
interface KeptList<R> {
  readonly version: string;
  readonly total: number;
  readonly pages: Map<number, KeptPage<R>>;
}

export class FailingLists<R> {
  readonly #lists: WeighedLru<KeptList<R>>;
  /** Pages being loaded, by key, version and page: concurrent requests of a new version share one read. */
  readonly #loading = new Map<string, Promise<KeptPage<R>>>();

  constructor(maxEntries: number) {
    this.#lists = new WeighedLru(maxEntries);
  }

  /**
   * Page `page` of the list named `key` (repository, window and its hours) at `version` (read before
   * calling), loaded and kept when not held at that version.
   */
  async page(
    key: string,
    version: string,
    page: number,
    load: (page: number) => Promise<KeptPage<R>>,
  ): Promise<KeptPage<R>> {
    const held = this.#lists.get(key);
    const list = held?.version === version ? held : undefined;
    const wanted =
      list === undefined ? page : Math.min(Math.max(1, page), Math.max(1, Math.ceil(list.total / PAGE_ROWS)));
    const kept = list?.pages.get(wanted);
    if (list !== undefined && kept !== undefined) {
      list.pages.delete(wanted);
      list.pages.set(wanted, kept);
      return kept;
    }
    const loadKey = `${key}\n${version}\n${wanted}`;
    const pending = this.#loading.get(loadKey);
    if (pending !== undefined) return pending;
    const loading = load(wanted);
    this.#loading.set(loadKey, loading);
    try {
      const loaded = await loading;
      const current = this.#lists.get(key);
      const into =
        current?.version === version
          ? current
          : { version, total: loaded.total, pages: new Map<number, KeptPage<R>>() };
      if (into.pages.size >= PAGES_PER_LIST) into.pages.delete(into.pages.keys().next().value as number);
      into.pages.set(loaded.page, loaded);
      this.#lists.set(key, into, 1 + PAGE_ROWS * into.pages.size);
      return loaded;
    } finally {
      this.#loading.delete(loadKey);
    }
  }
}
