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
  const upload = await db
    .selectFrom('uploads')
    .select('repo_id')
    .where('id', '=', uploadId)
    .executeTakeFirst();
  if (upload === undefined) return undefined;
  const rows = await db
    .selectFrom('test_results as r')
    .innerJoin('test_cases as t', 't.id', 'r.test_case_id')
    .select([
      'r.test_case_id',
      'r.at',
      'r.outcome',
      'r.quarantined',
      'r.failure_fingerprint',
      'r.failure_summary',
      'r.duration_ms',
      't.ordinal',
    ])
    .where('r.upload_id', '=', uploadId)
    .execute();
  const results = rows.map((r) => ({
    ...r,
    at: Number(r.at),
    ordinal: Number(r.ordinal),
    duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
  }));
  const ordinals = new Map(results.map((r) => [r.test_case_id, r.ordinal] as const));
  const blob = await db
    .selectFrom('upload_passes')
    .select(['count', 'at_min', 'at_max', 'ordinals', 'details'])
    .where('upload_id', '=', uploadId)
    .executeTakeFirst();
  const passes: EncodedPasses =
    blob === undefined
      ? { count: 0, atMin: 0, atMax: 0, ordinals: new Uint8Array(0), details: new Uint8Array(0) }
      : {
          count: Number(blob.count),
          atMin: Number(blob.at_min),
          atMax: Number(blob.at_max),
          ordinals: aligned(blob.ordinals),
          details: aligned(blob.details),
        };
  return {
    repoId: upload.repo_id,
    results,
    passes,
    ordinalOf: (id: string) => ordinals.get(id) as number,
  };
}

/** A copy of `bytes` in a buffer of its own (aligned for typed-array views). */
export function aligned(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}
