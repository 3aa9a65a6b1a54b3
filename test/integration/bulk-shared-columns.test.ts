// Multi-row SQLite inserts bind a column that has one value in every row of a statement once
// (db/bulk.ts sqliteInsert): the rows stored must be exactly those given, on both engines, whichever
// columns are shared, however the rows fall into statements, and through the rollups' upsert
// (store/uploads/rollups-run-rows.ts addRunRows).
import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMany, sqliteInsert } from '../../src/db/bulk.ts';
import { addRunRows } from '../../src/store/uploads/rollups-run-rows.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

describe('SQLite statements with shared columns', () => {
  it('binds a column once when every row of the statement has the same value in it', () => {
    const values: unknown[] = [];
    for (let r = 0; r < 1000; r++) values.push('repo', 7, r, 1, r % 3 === 0 ? null : 'x', 0);
    const columns = ['a', 'b', 'c', 'd', 'e', 'f'];
    const q = sqliteInsert('t', columns, '', values, 0, 1000);
    // a, b, d and f once; c and e per row.
    expect(q.parameters.length).toBe(4 + 2 * 1000);
    expect(q.parameters.slice(0, 4)).toEqual(['repo', 7, 1, 0]);
    expect(q.parameters.slice(4, 8)).toEqual([0, null, 1, 'x']);
    // 0 and -0 bind differently, so a column holding both is bound per row.
    const signed = sqliteInsert('t', ['a', 'b'], '', ['r', 0, 'r', -0], 0, 2);
    expect(signed.parameters).toEqual(['r', 0, -0]);
    // Rows alike in every column stay that many rows (one column bound per row).
    const alike = sqliteInsert('t', ['a', 'b'], '', ['r', 1, 'r', 1, 'r', 1], 0, 3);
    expect(alike.parameters).toEqual([1, 'r', 'r', 'r']);
    expect(alike.sql).toContain('values (?),(?),(?)');
    // One row: every column once.
    expect(sqliteInsert('t', columns, '', values, 999, 1).parameters).toEqual(values.slice(999 * 6));
  });
});

describe('inserts and upserts with shared columns', () => {
  let t: TestDatabase;
  const db = () => t.database.db;

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('stores rows as given, shared columns or not, in chunks of any size', async () => {
    const rows = Array.from({ length: 2_345 }, (_, i) => ({
      hash: `shared-${String(i).padStart(5, '0')}`,
      // Shared within most chunks, not all: the last chunk's rows have two texts.
      text: i < 2_000 ? 'the same text' : i % 2 === 0 ? 'even' : 'odd',
      last_used_at: i < 1_000 ? 5 : 6 + (i % 7),
    }));
    const inserted = await insertMany(db(), 'failure_texts', rows, { chunkRows: 1000 });
    expect(inserted).toBe(rows.length);
    // A second time with a conflict clause: every key is taken, nothing is inserted.
    expect(await insertMany(db(), 'failure_texts', rows.slice(0, 1001), { ignoreConflicts: true })).toBe(0);
    const stored = await db()
      .selectFrom('failure_texts')
      .select(['hash', 'text', 'last_used_at'])
      .where('hash', 'like', 'shared-%')
      .orderBy('hash')
      .execute();
    expect(stored.map((r) => ({ ...r, last_used_at: Number(r.last_used_at) }))).toEqual(rows);
  });

  it('adds run rows whose counts are shared by some statements and not others', async () => {
    const expected = new Map<string, number[]>();
    const add = async (rows: number[][]) => {
      const flat: unknown[] = [];
      for (const [hour, ordinal, ...counts] of rows as [number, number, ...number[]][]) {
        flat.push('repo-shared', hour, ordinal, ...counts);
        const k = `${hour}|${ordinal}`;
        const sum = expected.get(k) ?? [0, 0, 0, 0, 0, 0];
        expected.set(
          k,
          sum.map((s, i) => s + (counts[i] as number)),
        );
      }
      await db()
        .transaction()
        .execute((trx) => addRunRows(trx, flat));
    };
    // An upload's passes (every count shared but the duration), a few failures among them, a second
    // hour, then the same tests again (each row now an update) and once taken back out.
    const upload = (hour: number, failing: number) =>
      Array.from({ length: 2_500 }, (_, o) =>
        o % failing === 0 ? [hour, o, 0, 1, o % 2, 0, 10 + o, 1] : [hour, o, 1, 0, 0, 0, 3 + (o % 5), 1],
      );
    await add([...upload(100, 997), [101, 3, 0, 0, 0, 1, 0, 0]]);
    await add(upload(100, 1_000_000));
    await add(upload(100, 13).map((r) => r.map((v, i) => (i < 2 ? v : -v))));
    await add([[101, 3, 2, 0, 0, 0, 0, 0]]);
    const { rows } = await db().executeQuery<Record<string, unknown>>(
      CompiledQuery.raw(
        `select hour, ordinal, passed, failed, failed_quarantined, skipped, duration_sum_ms, duration_count
        from test_run_hours where repo_id = 'repo-shared'`,
      ),
    );
    const stored = new Map(
      rows.map((r) => [
        `${Number(r['hour'])}|${Number(r['ordinal'])}`,
        [
          r['passed'],
          r['failed'],
          r['failed_quarantined'],
          r['skipped'],
          r['duration_sum_ms'],
          r['duration_count'],
        ].map(Number),
      ]),
    );
    expect(stored).toEqual(expected);
  });
});
