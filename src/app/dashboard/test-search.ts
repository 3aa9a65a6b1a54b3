// The all-tests page's search texts, kept in memory per repository: every test's name, classname and
// file (lower-cased) in the list's order (name, then id, as the database orders them). A test's
// texts never change once it is stored and tests are never deleted; a new test raises the
// repository's ordinal count in the ingest transaction that stores it (store/tests/cases.ts), so the
// count names the texts exactly: each request reads it (one primary-key lookup) and reloads the
// texts only when it moved, which a known suite's uploads never do. Replicas sharing one PostgreSQL
// stay exact. A search is then a scan of the kept strings (a substring of any of the three, any
// case) instead of a scan of the test rows with three lower() calls each, twice (count and page).
// One per app (app/caches.ts), holding at most MAINLINE_KEPT_TEST_TEXTS tests in all; a repository
// with more is searched in the database.
// Beside the texts, the tests of each code owner asked for (from the owner index, test_owners) as one
// byte per test ordinal, kept by the ordinal count and the repository's owners_version (raised by
// every change of a known test's owners, in the transaction that changes them): a search with an
// owner then keeps the matches the owner has, without reading the owner's tests again. As many
// bitmaps as weigh MAINLINE_KEPT_TEST_TEXTS tests' texts (a test's texts taken as 200 bytes).

import { WeighedLru } from '../../lib/weighed-lru.ts';

/** One repository's texts at one ordinal count. */
export interface SearchTexts {
  readonly count: number;
  /** Test ordinals in the list's order. */
  readonly ordinals: Int32Array;
  readonly names: readonly string[];
  readonly classnames: readonly string[];
  readonly files: readonly string[];
}

type Row = { ordinal: number; name: string; classname: string | null; file: string | null };

function textsOf(count: number, rows: readonly Row[]): SearchTexts {
  const ordinals = new Int32Array(rows.length);
  const names: string[] = new Array(rows.length);
  const classnames: string[] = new Array(rows.length);
  const files: string[] = new Array(rows.length);
  rows.forEach((r, i) => {
    ordinals[i] = r.ordinal;
    names[i] = r.name.toLowerCase();
    classnames[i] = (r.classname ?? '').toLowerCase();
    files[i] = (r.file ?? '').toLowerCase();
  });
  return { count, ordinals, names, classnames, files };
}

/** One owner's tests: `has[ordinal]` is 1 for each, at one ordinal count and owners_version. */
interface OwnedTests {
  readonly ordinals: number;
  readonly owners: number;
  readonly has: Uint8Array;
}

/** What a test's kept texts are taken to weigh, in bytes, against an owner's byte a test. */
const TEXT_BYTES = 200;

export class TestSearchTexts {
  readonly #repos: WeighedLru<SearchTexts>;
  readonly #loading = new Map<string, Promise<SearchTexts>>();
  readonly #owned: WeighedLru<OwnedTests>;

  constructor(private readonly maxTests: number) {
    this.#repos = new WeighedLru(maxTests);
    this.#owned = new WeighedLru(maxTests);
  }

  /**
   * The tests `owner` owns in the repository at ordinal count `ordinals` and owners_version `owners`
   * (both read before calling), as a membership by ordinal; `load` reads their ordinals.
   */
  async owned(
    repoId: string,
    owner: string,
    versions: { ordinals: number; owners: number },
    load: () => Promise<Iterable<number>>,
  ): Promise<Uint8Array> {
    const key = JSON.stringify([repoId, owner]);
    const held = this.#owned.get(key);
    if (held !== undefined && held.ordinals === versions.ordinals && held.owners === versions.owners)
      return held.has;
    const has = new Uint8Array(versions.ordinals);
    for (const ordinal of await load()) if (ordinal < has.length) has[ordinal] = 1;
    this.#owned.set(key, { ...versions, has }, Math.ceil(has.length / TEXT_BYTES) + 1);
    return has;
  }

  /**
   * The repository's texts at ordinal count `count` (read before calling: rows loaded after it are at
   * least as new), loaded when not held at that count; undefined when the repository has more tests
   * than the cache holds.
   */
  async at(
    repoId: string,
    count: number,
    load: () => Promise<readonly Row[]>,
  ): Promise<SearchTexts | undefined> {
    if (count > this.maxTests) return undefined;
    const held = this.#repos.get(repoId);
    if (held !== undefined && held.count === count) return held;
    const key = `${repoId}\n${count}`;
    let loading = this.#loading.get(key);
    if (loading === undefined) {
      loading = load().then((rows) => textsOf(count, rows));
      this.#loading.set(key, loading);
      loading.then(
        (texts) => {
          this.#loading.delete(key);
          // A slower load of an older count does not replace a newer one.
          const now = this.#repos.get(repoId);
          if (now === undefined || now.count <= count)
            this.#repos.set(repoId, texts, texts.ordinals.length + 1);
        },
        () => this.#loading.delete(key),
      );
    }
    return loading;
  }
}

/**
 * The ordinals of the tests whose name, classname or file holds `search` and whose file holds `file`
 * (any case; '' matches every test), in the list's order.
 */
export function searchTexts(texts: SearchTexts, filter: { search: string; file: string }): number[] {
  const search = filter.search.toLowerCase();
  const file = filter.file.toLowerCase();
  const out: number[] = [];
  const n = texts.ordinals.length;
  for (let i = 0; i < n; i++) {
    if (file !== '' && !(texts.files[i] as string).includes(file)) continue;
    if (
      search !== '' &&
      !(texts.names[i] as string).includes(search) &&
      !(texts.classnames[i] as string).includes(search) &&
      !(texts.files[i] as string).includes(search)
    )
      continue;
    out.push(texts.ordinals[i] as number);
  }
  return out;
}
