import { type PagePosition, PageTokens } from './page-token.ts';

/** `page_query` of the flaky-tests family: page_size 1–100, optional opaque page_token. */
export interface PageQuery {
  readonly page_size: number;
  readonly page_token?: string | undefined;
}

/** `page` of every paginated response. Tokens are "" where there is no such page. */
export interface PageInfo {
  total_rows: number;
  total_pages: number;
  next_page_token: string;
  prev_page_token: string;
  last_page_token: string;
  page_index: number;
}

/** A sorted set of rows that can be read by keyset from either end. */
export interface KeysetSource<R, K> {
  count(): Promise<number>;
  /** Up to `limit` rows in sort order strictly after `key` (from the start when undefined). */
  after(key: K | undefined, limit: number): Promise<R[]>;
  /** Up to `limit` rows in reverse sort order strictly before `key` (from the end when undefined). */
  before(key: K | undefined, limit: number): Promise<R[]>;
  keyOf(row: R): K;
}

interface Window<R> {
  rows: R[];
  index: number;
  hasNext: boolean;
  hasPrev: boolean;
}

async function readWindow<R, K>(
  source: KeysetSource<R, K>,
  size: number,
  total: number,
  position: PagePosition<K> | undefined,
): Promise<Window<R>> {
  if (position === undefined || position.dir === 'after') {
    const rows = await source.after(position?.key, size + 1);
    const hasNext = rows.length > size;
    return {
      rows: rows.slice(0, size),
      index: position?.index ?? 0,
      hasNext,
      hasPrev: position !== undefined,
    };
  }
  if (position.dir === 'before') {
    const rows = await source.before(position.key as K, size + 1);
    const hasPrev = rows.length > size;
    return {
      rows: rows.slice(0, size).reverse(),
      index: hasPrev ? Math.max(1, position.index) : 0,
      hasNext: true,
      hasPrev,
    };
  }
  const pages = Math.ceil(total / size);
  const lastCount = total - (pages - 1) * size;
  const rows = total === 0 ? [] : (await source.before(undefined, lastCount)).reverse();
  return { rows, index: Math.max(0, pages - 1), hasNext: false, hasPrev: pages > 1 };
}

/**
 * Reads one page by keyset (never OFFSET) and issues the tokens for the neighbouring pages.
 * Walking next_page_token from the first page visits each row once, whatever is inserted meanwhile.
 */
export async function paginate<R, K>(
  tokens: PageTokens,
  queryParts: readonly unknown[],
  query: PageQuery,
  source: KeysetSource<R, K>,
): Promise<{ rows: R[]; page: PageInfo }> {
  const size = query.page_size;
  const queryHash = PageTokens.queryHash([...queryParts, size]);
  const position = tokens.verify<PagePosition<K>>(queryHash, query.page_token);
  const total = await source.count();
  const w = await readWindow(source, size, total, position);
  const first = w.rows[0];
  const last = w.rows.at(-1);
  const sign = (dir: 'after' | 'before' | 'last', key: K | undefined, index: number) =>
    tokens.sign(queryHash, key === undefined ? { dir, index } : { dir, key, index });
  return {
    rows: w.rows,
    page: {
      total_rows: total,
      total_pages: Math.ceil(total / size),
      next_page_token: w.hasNext && last !== undefined ? sign('after', source.keyOf(last), w.index + 1) : '',
      prev_page_token:
        w.hasPrev && first !== undefined ? sign('before', source.keyOf(first), w.index - 1) : '',
      last_page_token: total > 0 ? sign('last', undefined, Math.ceil(total / size) - 1) : '',
      page_index: w.index,
    },
  };
}
