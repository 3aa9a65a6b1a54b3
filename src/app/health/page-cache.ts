// The records of list pages, kept while nothing in the repository's health changed. Every write to
// test_cases bumps the repository's `health_version` in its transaction (the store's writers do so
// themselves: store/tenancy/repos.ts writeTestHealth), so a page of
// a frozen list snapshot read again at the same version holds the same records: a repeated page
// costs the version lookup instead of 100 joined rows and records built again (less garbage, fewer
// collection pauses in the tail). Checked against the database's version on every read, so
// replicas sharing one PostgreSQL stay exact. Records are shared between answers: never changed.
// One per app (app/caches.ts, MAINLINE_PAGE_CACHE pages).
import { Lru } from '../../lib/lru.ts';

export class PageCache<R> {
  readonly #pages: Lru<{ version: number; records: readonly R[] }>;

  constructor(maxPages: number) {
    this.#pages = new Lru(maxPages);
  }

  /**
   * The records of page `key` at `version` (read before calling: records loaded after it are at
   * least as new), loaded and kept when not held at that version.
   */
  async page(key: string, version: number, load: () => Promise<R[]>): Promise<readonly R[]> {
    const held = this.#pages.get(key);
    if (held !== undefined && held.version === version) return held.records;
    const records = await load();
    this.#pages.set(key, { version, records });
    return records;
  }
}
