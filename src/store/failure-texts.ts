// Failure texts, stored once per distinct text (migration 0013): results keep a hash of theirs.
import { createHash } from 'node:crypto';
import { chunked, insertMany, type Queryable } from './db.ts';

/** The key of a failure text: 128 bits of its SHA-256, base64url (22 characters). */
export function failureTextHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** Stores the texts (by hash) that are not stored yet. */
export async function storeFailureTexts(db: Queryable, texts: ReadonlyMap<string, string>): Promise<void> {
  if (texts.size === 0) return;
  const missing = new Set(texts.keys());
  for (const part of chunked([...texts.keys()])) {
    const rows = await db.selectFrom('failure_texts').select('hash').where('hash', 'in', part).execute();
    for (const r of rows) missing.delete(r.hash);
  }
  await insertMany(
    db,
    'failure_texts',
    [...missing].map((hash) => ({ hash, text: texts.get(hash) as string })),
    { ignoreConflicts: true },
  );
}

/** Deletes those of these texts that no result refers to any more (after results were deleted). */
export async function deleteUnusedFailureTexts(db: Queryable, hashes: readonly string[]): Promise<number> {
  let deleted = 0;
  for (const part of chunked(hashes)) {
    const result = await db
      .deleteFrom('failure_texts')
      .where('hash', 'in', part)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('test_results').select('id').whereRef('failure_text_hash', '=', 'failure_texts.hash'),
          ),
        ),
      )
      .executeTakeFirst();
    deleted += Number(result.numDeletedRows);
  }
  return deleted;
}
