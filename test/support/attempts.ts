// Every stored attempt of a database as (upload, test) pairs: failed and skipped ones are rows of
// test_results, passes are decoded from upload_passes (one row per upload, tests by ordinal).

import type { Queryable } from '../../src/db/bulk.ts';
import { decodeOrdinals } from '../../src/store/uploads/pass-codec.ts';

export interface StoredAttempt {
  upload_id: string;
  test_case_id: string;
}

export async function storedAttempts(db: Queryable): Promise<StoredAttempt[]> {
  const out: StoredAttempt[] = await db
    .selectFrom('test_results')
    .select(['upload_id', 'test_case_id'])
    .execute();
  const uploads = await db
    .selectFrom('upload_passes')
    .select(['upload_id', 'repo_id', 'ordinals', 'at_min', 'at_max'])
    .execute();
  for (const u of uploads) {
    const tests = await db
      .selectFrom('test_cases')
      .select(['id', 'ordinal'])
      .where('repo_id', '=', u.repo_id)
      .execute();
    const idOf = new Map(tests.map((t) => [Number(t.ordinal), t.id]));
    for (const ordinal of decodeOrdinals(u.ordinals, Number(u.at_min), Number(u.at_max)).ordinals) {
      out.push({ upload_id: u.upload_id, test_case_id: idOf.get(ordinal) ?? `missing ordinal ${ordinal}` });
    }
  }
  return out;
}
