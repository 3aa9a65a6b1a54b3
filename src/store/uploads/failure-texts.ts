// Failure texts, stored once per distinct text (migration 0013): results keep a hash of theirs.
import { createHash } from 'node:crypto';
import { insertMany, keyChunks, type Queryable } from '../../db/bulk.ts';

/** The key of a failure text: 128 bits of its SHA-256, base64url (22 characters). */
export function failureTextHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/**
 * A text's last use is moved forward only when it is older than this: a broken test's text is used by
 * upload after upload, and a write per text per upload would cost what the index it replaced did.
 */
export const TEXT_USE_PRECISION_MS = 24 * 3_600_000;

/**
 * Stores the texts (by hash) that are not stored yet, and marks those last used over a day ago as used
 * `now`. One statement writes both (an upsert): a text that retention deletes meanwhile on another
 * replica is stored again, never lost.
 */
export async function storeFailureTexts(
  db: Queryable,
  texts: ReadonlyMap<string, string>,
  now: number,
): Promise<void> {
  if (texts.size === 0) return;
  const write = new Set(texts.keys());
  for (const part of keyChunks(db, [...texts.keys()])) {
    const rows = await db
      .selectFrom('failure_texts')
      .select('hash')
      .where('hash', 'in', part)
      .where('last_used_at', '>=', now - TEXT_USE_PRECISION_MS)
      .execute();
    for (const r of rows) write.delete(r.hash);
  }
  await insertMany(
    db,
    'failure_texts',
    [...write].map((hash) => ({ hash, text: texts.get(hash) as string, last_used_at: now })),
    { updateOnConflict: { key: 'hash', columns: ['last_used_at'] } },
  );
}

/**
 * Deletes the texts no kept result can have: those last used before `before` (the oldest upload time
 * retention keeps) less the precision of `last_used_at`. Call it only once every upload created
 * before `before` is deleted. Returns the texts deleted.
 */
export async function deleteFailureTextsUsedBefore(db: Queryable, before: number): Promise<number> {
  const result = await db
    .deleteFrom('failure_texts')
    .where('last_used_at', '<', before - TEXT_USE_PRECISION_MS)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
