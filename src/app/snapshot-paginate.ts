import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Queryable } from '../db/bulk.ts';
import type { Tables } from '../store/schema.ts';
import { findReusableSnapshot, findSnapshot, saveSnapshot } from '../store/tests/snapshots.ts';
import { inTransaction } from '../store/transaction.ts';
import { invalidPageToken, PageTokens } from './page-token.ts';
import type { PageInfo, PageQuery } from './paginate.ts';

/** How long a snapshot's page tokens stay valid. */
export const SNAPSHOT_TTL_MS = 60 * 60 * 1000;

/** A list whose order can change while someone pages through it. */
export interface SnapshotSource<R> {
  /** The data version of what the list shows (the repository's health_version). */
  version(): Promise<number>;
  count(): Promise<number>;
  /** The first `limit` rows in list order, read live. */
  firstPage(limit: number): Promise<R[]>;
  /** Inserts (snapshot_id, pos, item_id) rows for the whole list in order (one INSERT … SELECT). */
  fill(db: Queryable, snapshotId: string): Promise<void>;
  /**
   * The rows at positions from..to (1-based, inclusive) of a snapshot `fill` wrote, in snapshot
   * order (one join of the snapshot rows with the live rows); rows deleted since are skipped.
   */
  page(snapshotId: string, from: number, to: number): Promise<readonly R[]>;
}

/** What a token of a snapshotted list carries: the snapshot (null: the live single page) and page index. */
export interface SnapshotPosition {
  s: string | null;
  i: number;
}

function pageInfo(
  tokens: PageTokens,
  hash: string,
  total: number,
  size: number,
  at: SnapshotPosition,
): PageInfo {
  const pages = Math.ceil(total / size);
  const sign = (i: number) => tokens.sign(hash, { s: at.s, i });
  return {
    total_rows: total,
    total_pages: pages,
    next_page_token: at.i + 1 < pages ? sign(at.i + 1) : '',
    prev_page_token: at.i > 0 ? sign(at.i - 1) : '',
    last_page_token: pages > 0 ? sign(pages - 1) : '',
    page_index: at.i,
  };
}

function pageOf<R>(
  source: SnapshotSource<R>,
  id: string,
  index: number,
  size: number,
): Promise<readonly R[]> {
  return source.page(id, index * size + 1, (index + 1) * size);
}

/**
 * Pages through a list with a changeable order. A list that fits one page is read live. A longer
 * list's order is frozen in a snapshot at its first page, and every later page token points into
 * that snapshot, so a walk sees each row exactly once and total_rows stays fixed. A first page reuses
 * a snapshot taken at the same data version (nothing changed since) in the last half hour, so
 * repeated first-page reads cost an index lookup, not a copy of the list. Tokens expire with the
 * snapshot after an hour (400 INVALID_PAGE_TOKEN: start again).
 */
export async function snapshotPaginate<R>(
  db: Kysely<Tables>,
  tokens: PageTokens,
  queryParts: readonly unknown[],
  query: PageQuery,
  source: SnapshotSource<R>,
  now: number,
): Promise<{ rows: readonly R[]; page: PageInfo; at: SnapshotPosition }> {
  const size = query.page_size;
  const hash = PageTokens.queryHash([...queryParts, size]);
  const at = tokens.verify<SnapshotPosition>(hash, query.page_token);
  if (at !== undefined && at.s !== null) {
    const snapshot = await findSnapshot(db, at.s);
    if (
      snapshot === undefined ||
      snapshot.query_hash !== hash ||
      now - snapshot.created_at > SNAPSHOT_TTL_MS
    ) {
      throw invalidPageToken('it has expired (page tokens last one hour)');
    }
    return {
      rows: await pageOf(source, at.s, at.i, size),
      page: pageInfo(tokens, hash, snapshot.total, size, at),
      at,
    };
  }
  // A snapshot of the same data version answers a first page without counting or copying anything.
  const version = await source.version();
  const reusable = await findReusableSnapshot(db, hash, version, now - SNAPSHOT_TTL_MS / 2);
  if (reusable !== undefined) {
    const first = { s: reusable.id, i: 0 };
    return {
      rows: await pageOf(source, reusable.id, 0, size),
      page: pageInfo(tokens, hash, reusable.total, size, first),
      at: first,
    };
  }
  const total = await source.count();
  if (total <= size) {
    const live = { s: null, i: 0 };
    return { rows: await source.firstPage(size), page: pageInfo(tokens, hash, total, size, live), at: live };
  }
  const id = randomUUID();
  const frozen = await inTransaction(db, (trx) =>
    saveSnapshot(trx, { id, queryHash: hash, version, createdAt: now }, (d) => source.fill(d, id)),
  );
  const first = { s: id, i: 0 };
  return {
    rows: await pageOf(source, id, 0, size),
    page: pageInfo(tokens, hash, frozen, size, first),
    at: first,
  };
}
