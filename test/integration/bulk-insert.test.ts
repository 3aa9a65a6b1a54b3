// Bulk inserts (db/bulk.ts insertMany) on the real database: on PostgreSQL rows go in by COPY, whose
// text format escapes tabs, line breaks and backslashes; rows with a conflict clause go in by COPY in
// a savepoint and, when a key is taken, again with the clause, and the transaction goes on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMany } from '../../src/db/bulk.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';

const AWKWARD = [
  'tab\there',
  'line\nbreak and\r\ncarriage return',
  'back\\slash, \\N, \\t and \\\\',
  '\\N',
  '',
  'ünïcödé ✓ 𝄞',
  `a long one ${'x'.repeat(70_000)}`,
  'nul \u0000 inside',
];

describe('bulk inserts', () => {
  let t: TestDatabase;
  const db = () => t.database.db;
  const texts = async (prefix: string) =>
    new Map(
      (await db().selectFrom('failure_texts').selectAll().where('hash', 'like', `${prefix}%`).execute()).map(
        (r) => [r.hash, r] as const,
      ),
    );

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('stores every value as given: tabs, line breaks, backslashes, \\N, empty, long, non-ASCII', async () => {
    const rows = AWKWARD.map((text, i) => ({ hash: `plain-${i}`, text, last_used_at: 1000 + i }));
    const inserted = await db()
      .transaction()
      .execute((trx) => insertMany(trx, 'failure_texts', rows));
    expect(inserted).toBe(rows.length);
    const stored = await texts('plain-');
    for (const row of rows) {
      // PostgreSQL text cannot hold NUL: it becomes U+FFFD there instead of failing the upload.
      const expected = onPostgres ? row.text.replace('\u0000', '\uFFFD') : row.text;
      expect(stored.get(row.hash)).toEqual({ ...row, text: expected });
    }
  });

  it('skips rows whose key is taken and keeps the transaction going (ignoreConflicts)', async () => {
    await insertMany(db(), 'failure_texts', [{ hash: 'taken-1', text: 'first', last_used_at: 1 }]);
    const committed = await db()
      .transaction()
      .execute(async (trx) => {
        const inserted = await insertMany(
          trx,
          'failure_texts',
          [
            { hash: 'taken-0', text: 'new\tzero', last_used_at: 2 },
            { hash: 'taken-1', text: 'second', last_used_at: 2 },
            { hash: 'taken-2', text: 'new\\two', last_used_at: 2 },
          ],
          { ignoreConflicts: true },
        );
        // The transaction is still usable after the conflict.
        await insertMany(trx, 'failure_texts', [{ hash: 'taken-3', text: 'after', last_used_at: 3 }]);
        return inserted;
      });
    expect(committed).toBe(2);
    const stored = await texts('taken-');
    expect([...stored.values()].map((r) => [r.hash, r.text, r.last_used_at]).sort()).toEqual([
      ['taken-0', 'new\tzero', 2],
      ['taken-1', 'first', 1],
      ['taken-2', 'new\\two', 2],
      ['taken-3', 'after', 3],
    ]);
  });

  it('updates the named columns of rows whose key is taken (updateOnConflict)', async () => {
    await insertMany(db(), 'failure_texts', [{ hash: 'upsert-1', text: 'kept', last_used_at: 1 }]);
    await db()
      .transaction()
      .execute((trx) =>
        insertMany(
          trx,
          'failure_texts',
          [
            { hash: 'upsert-1', text: 'ignored', last_used_at: 50 },
            { hash: 'upsert-2', text: 'new', last_used_at: 50 },
          ],
          { updateOnConflict: { key: 'hash', columns: ['last_used_at'] } },
        ),
      );
    const stored = await texts('upsert-');
    expect(stored.get('upsert-1')).toEqual({ hash: 'upsert-1', text: 'kept', last_used_at: 50 });
    expect(stored.get('upsert-2')).toEqual({ hash: 'upsert-2', text: 'new', last_used_at: 50 });
  });

  it('rolls the whole transaction back when a later statement fails', async () => {
    await expect(
      db()
        .transaction()
        .execute(async (trx) => {
          await insertMany(trx, 'failure_texts', [{ hash: 'rolled-1', text: 'gone', last_used_at: 1 }]);
          // A plain insert of a taken key fails (no conflict clause).
          await insertMany(trx, 'failure_texts', [{ hash: 'rolled-1', text: 'again', last_used_at: 1 }]);
        }),
    ).rejects.toThrow();
    expect((await texts('rolled-')).size).toBe(0);
  });
});
