// An upload's attempts as stored: its failed and skipped results (with their tests' ordinals) and its
// pass blob, read back for retention (store/uploads/rollups-write.ts) and for the deferred duration
// means (store/uploads/duration-writes.ts).
import type { Queryable } from '../../db/bulk.ts';
import type { EncodedPasses } from './pass-codec.ts';

/** A stored failed or skipped result with its test's ordinal. */
export interface StoredResult {
  readonly test_case_id: string;
  readonly at: number;
  readonly outcome: string;
  readonly quarantined: number;
  readonly failure_fingerprint: string | null;
  readonly failure_summary: string | null;
  readonly duration_ms: number | null;
  readonly ordinal: number;
}

export interface StoredAttempts {
  readonly repoId: string;
  readonly results: StoredResult[];
  readonly passes: EncodedPasses;
  readonly ordinalOf: (testId: string) => number;
}

/** An upload's stored attempts, or undefined if the upload is gone. */
export async function storedAttempts(db: Queryable, uploadId: string): Promise<StoredAttempts | undefined> {
  return (await storedAttemptsOf(db, [uploadId])).get(uploadId);
}

const NO_PASSES: EncodedPasses = {
  count: 0,
  atMin: 0,
  atMax: 0,
  ordinals: new Uint8Array(0),
  details: new Uint8Array(0),
};

/**
 * The stored attempts of these uploads, by upload (the ones gone are absent), in three statements
 * whatever their number (the fold of pending uploads reads up to 64 at once: on PostgreSQL each
 * statement is a round trip). At most a few hundred ids per call.
 */
export async function storedAttemptsOf(
  db: Queryable,
  uploadIds: readonly string[],
): Promise<Map<string, StoredAttempts>> {
  const out = new Map<string, StoredAttempts>();
  if (uploadIds.length === 0) return out;
  const ids = [...uploadIds];
  const uploads = await db.selectFrom('uploads').select(['id', 'repo_id']).where('id', 'in', ids).execute();
  if (uploads.length === 0) return out;
  const found = uploads.map((u) => u.id);
  const rows = await db
    .selectFrom('test_results as r')
    .innerJoin('test_cases as t', 't.id', 'r.test_case_id')
    .select([
      'r.upload_id',
      'r.test_case_id',
      'r.at',
      'r.outcome',
      'r.quarantined',
      'r.failure_fingerprint',
      'r.failure_summary',
      'r.duration_ms',
      't.ordinal',
    ])
    .where('r.upload_id', 'in', found)
    .execute();
  const resultsOf = new Map<string, StoredResult[]>();
  for (const { upload_id, ...r } of rows) {
    let list = resultsOf.get(upload_id);
    if (list === undefined) {
      list = [];
      resultsOf.set(upload_id, list);
    }
    list.push({
      ...r,
      at: Number(r.at),
      ordinal: Number(r.ordinal),
      duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
    });
  }
  const blobs = await db
    .selectFrom('upload_passes')
    .select(['upload_id', 'count', 'at_min', 'at_max', 'ordinals', 'details'])
    .where('upload_id', 'in', found)
    .execute();
  const passesOf = new Map<string, EncodedPasses>();
  for (const blob of blobs)
    passesOf.set(blob.upload_id, {
      count: Number(blob.count),
      atMin: Number(blob.at_min),
      atMax: Number(blob.at_max),
      ordinals: aligned(blob.ordinals),
      details: aligned(blob.details),
    });
  for (const upload of uploads) {
    const results = resultsOf.get(upload.id) ?? [];
    const ordinals = new Map(results.map((r) => [r.test_case_id, r.ordinal] as const));
    out.set(upload.id, {
      repoId: upload.repo_id,
      results,
      passes: passesOf.get(upload.id) ?? NO_PASSES,
      ordinalOf: (id: string) => ordinals.get(id) as number,
    });
  }
  return out;
}

/** A copy of `bytes` in a buffer of its own (aligned for typed-array views). */
export function aligned(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}
