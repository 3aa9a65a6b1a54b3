// Passing attempts, stored per upload (migration 0012, pass-codec.ts): one row of `upload_passes` per
// upload instead of one row per pass. Readers find the uploads they need (by repository and time, or
// by commit, or by id), then look their tests' ordinals up in each upload's sorted array.
import { sql } from 'kysely';
import { chunked, type Queryable } from '../../db/bulk.ts';
import {
  decodeDetails,
  decodeOrdinals,
  type EncodedPasses,
  type PassDetails,
  passRange,
  type UploadPassSet,
} from './pass-codec.ts';

/** An upload's pass blobs as listed (the blobs are read separately, and cached). */
export interface PassBlob {
  /** The blobs' own id: a new one whenever they are (re)written, so cached copies never go stale. */
  readonly blobId: string;
  readonly count: number;
  readonly atMin: number;
  readonly atMax: number;
}

/** An upload's passes with what the upload says of them. */
export interface PassUpload extends PassBlob {
  readonly uploadId: string;
  readonly repoId: string;
  readonly branch: string;
  readonly commitSha: string;
  readonly prNumber: number | null;
}

export async function insertUploadPasses(
  db: Queryable,
  row: { blobId: string; uploadId: string; repoId: string; passes: EncodedPasses },
): Promise<void> {
  if (row.passes.count === 0) return;
  await db
    .insertInto('upload_passes')
    .values({
      id: row.blobId,
      upload_id: row.uploadId,
      repo_id: row.repoId,
      count: row.passes.count,
      at_min: row.passes.atMin,
      at_max: row.passes.atMax,
      ordinals: row.passes.ordinals,
      details: row.passes.details,
    })
    .execute();
}

const listed = (db: Queryable) =>
  db
    .selectFrom('upload_passes as p')
    .innerJoin('uploads as u', 'u.id', 'p.upload_id')
    .select([
      'p.id',
      'p.upload_id',
      'p.repo_id',
      'p.count',
      'p.at_min',
      'p.at_max',
      'u.branch',
      'u.commit_sha',
      'u.pr_number',
    ]);

type ListedRow = Awaited<ReturnType<ReturnType<typeof listed>['execute']>>[number];

function toPassUpload(r: ListedRow): PassUpload {
  return {
    blobId: r.id,
    uploadId: r.upload_id,
    repoId: r.repo_id,
    count: Number(r.count),
    atMin: Number(r.at_min),
    atMax: Number(r.at_max),
    branch: r.branch,
    commitSha: r.commit_sha,
    prNumber: r.pr_number,
  };
}

/** The repository's uploads with a pass at or after `since` (indexed: by repository and latest pass). */
export async function passUploadsSince(db: Queryable, repoId: string, since: number): Promise<PassUpload[]> {
  const rows = await listed(db).where('p.repo_id', '=', repoId).where('p.at_max', '>=', since).execute();
  return rows.map(toPassUpload);
}

/**
 * The pass blobs of the repository's uploads with a pass at or after `since`, for counting: read
 * from the index alone (repository, latest pass, earliest pass, count, id).
 */
export async function passBlobsSince(db: Queryable, repoId: string, since: number): Promise<PassBlob[]> {
  const rows = await db
    .selectFrom('upload_passes')
    .select(['id', 'count', 'at_min', 'at_max'])
    .where('repo_id', '=', repoId)
    .where('at_max', '>=', since)
    .execute();
  return rows.map((r) => ({
    blobId: r.id,
    count: Number(r.count),
    atMin: Number(r.at_min),
    atMax: Number(r.at_max),
  }));
}

/** The repository's uploads of these commits that have passes. */
export async function passUploadsOfCommits(
  db: Queryable,
  repoId: string,
  commitShas: readonly string[],
): Promise<PassUpload[]> {
  if (commitShas.length === 0) return [];
  const rows = await listed(db)
    .where('u.repo_id', '=', repoId)
    .where('u.commit_sha', 'in', [...commitShas])
    .execute();
  return rows.map(toPassUpload);
}

/** These uploads' passes, where they have any. */
export async function passUploadsByIds(db: Queryable, uploadIds: readonly string[]): Promise<PassUpload[]> {
  const out: PassUpload[] = [];
  for (const part of chunked(uploadIds)) {
    for (const r of await listed(db).where('p.upload_id', 'in', part).execute()) out.push(toPassUpload(r));
  }
  return out;
}

/**
 * Decoded blobs of the uploads read last, up to a budget of bytes: a repository's recent uploads are
 * read again by every page of its tests and every upload's re-evaluation. Keyed by blob id, which
 * names one content for good, so a kept blob is never stale. One per app (app/caches.ts,
 * MAINLINE_PASS_CACHE_BYTES), handed to every read of passes.
 */
export class PassBlobs {
  readonly #entries = new Map<string, { value: UploadPassSet | PassDetails; bytes: number }>();
  #bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get<T extends UploadPassSet | PassDetails>(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value as T;
  }

  set(key: string, value: UploadPassSet | PassDetails, bytes: number): void {
    if (bytes > this.maxBytes) return;
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#bytes -= old.bytes;
      this.#entries.delete(key);
    }
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(k);
      this.#bytes -= e.bytes;
    }
  }
}

/** One blob column of an upload's row, decoded, from the cache or read and cached. */
async function cachedBlob<T extends UploadPassSet | PassDetails>(
  db: Queryable,
  cache: PassBlobs,
  upload: PassBlob,
  column: 'ordinals' | 'details',
  decode: (bytes: Uint8Array) => { value: T; bytes: number },
): Promise<T> {
  const key = `${column}:${upload.blobId}`;
  const hit = cache.get<T>(key);
  if (hit !== undefined) return hit;
  const row = await db
    .selectFrom('upload_passes')
    .select(column)
    .where('id', '=', upload.blobId)
    .executeTakeFirstOrThrow();
  const decoded = decode((row as Record<typeof column, Uint8Array>)[column]);
  cache.set(key, decoded.value, decoded.bytes);
  return decoded.value;
}

/** An upload's passing tests' ordinals, sorted. */
export function passSet(db: Queryable, cache: PassBlobs, upload: PassBlob): Promise<UploadPassSet> {
  return cachedBlob(db, cache, upload, 'ordinals', (bytes) => ({
    value: decodeOrdinals(bytes, upload.atMin, upload.atMax),
    bytes: bytes.byteLength,
  }));
}

/** An upload's passes' times, retries and durations, in the order of its ordinals. */
export function passDetails(db: Queryable, cache: PassBlobs, upload: PassBlob): Promise<PassDetails> {
  return cachedBlob(db, cache, upload, 'details', (bytes) => ({
    value: decodeDetails(bytes, upload.count),
    bytes: bytes.byteLength,
  }));
}

/** A test to look up: its id and its ordinal in its repository. */
export interface OrdinalOf {
  readonly id: string;
  readonly ordinal: number;
}

/** Ids, repositories and ordinals of these tests (by primary key). */
export async function ordinalsOf(
  db: Queryable,
  testIds: readonly string[],
): Promise<(OrdinalOf & { repoId: string })[]> {
  const out: (OrdinalOf & { repoId: string })[] = [];
  for (const part of chunked(testIds)) {
    const rows = await db
      .selectFrom('test_cases')
      .select(['id', 'repo_id', 'ordinal'])
      .where('id', 'in', part)
      .execute();
    for (const r of rows) out.push({ id: r.id, repoId: r.repo_id, ordinal: Number(r.ordinal) });
  }
  return out;
}

/** Ids of the repository's tests with these ordinals (indexed: repository and ordinal). */
export async function testIdsOfOrdinals(
  db: Queryable,
  repoId: string,
  ordinals: Iterable<number>,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const part of chunked([...ordinals])) {
    const rows = await db
      .selectFrom('test_cases')
      .select(['id', 'ordinal'])
      .where('repo_id', '=', repoId)
      .where('ordinal', 'in', part)
      .execute();
    for (const r of rows) out.set(Number(r.ordinal), r.id);
  }
  return out;
}

/** One pass, with what its upload says of it. */
export interface PassRow {
  readonly testId: string;
  readonly at: number;
  readonly retryIndex: number;
  readonly upload: PassUpload;
  /** Its position among the upload's passes (passes are told apart by upload and position). */
  readonly position: number;
}

/**
 * The passes of these tests in these uploads that `keep` accepts (given the pass's time and upload).
 * Reads each upload's ordinals, and its details only when one of the tests passed in it.
 */
export async function passesOf(
  db: Queryable,
  cache: PassBlobs,
  tests: readonly OrdinalOf[],
  uploads: readonly PassUpload[],
  keep: (at: number, upload: PassUpload) => boolean,
): Promise<PassRow[]> {
  const out: PassRow[] = [];
  for (const upload of uploads) {
    const set = await passSet(db, cache, upload);
    let details: PassDetails | undefined;
    for (const t of tests) {
      const [from, to] = passRange(set.ordinals, t.ordinal);
      if (from === to) continue;
      details ??= await passDetails(db, cache, upload);
      for (let i = from; i < to; i++) {
        const at = upload.atMin + (details.atOffsets[i] as number);
        if (!keep(at, upload)) continue;
        out.push({ testId: t.id, at, retryIndex: details.retries[i] as number, upload, position: i });
      }
    }
  }
  return out;
}

/**
 * How many times each test passed since each of `bounds` (ascending times), in the repository's
 * uploads: an upload whose passes all lie on one side of a bound counts without reading times.
 */
export async function passCounts(
  db: Queryable,
  cache: PassBlobs,
  repoId: string,
  tests: readonly OrdinalOf[],
  bounds: readonly number[],
): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  if (tests.length === 0 || bounds.length === 0) return out;
  for (const upload of await passBlobsSince(db, repoId, bounds[0] as number)) {
    const set = await passSet(db, cache, upload);
    for (const t of tests) {
      const [from, to] = passRange(set.ordinals, t.ordinal);
      if (from === to) continue;
      let counts = out.get(t.id);
      if (counts === undefined) {
        counts = bounds.map(() => 0);
        out.set(t.id, counts);
      }
      for (let b = 0; b < bounds.length; b++) {
        const bound = bounds[b] as number;
        if (upload.atMin >= bound) counts[b] = (counts[b] as number) + (to - from);
        else if (upload.atMax >= bound) {
          const details = await passDetails(db, cache, upload);
          for (let i = from; i < to; i++)
            if (upload.atMin + (details.atOffsets[i] as number) >= bound)
              counts[b] = (counts[b] as number) + 1;
        }
      }
    }
  }
  return out;
}

/** Total passes stored for a repository (or all), for tests and benchmarks. */
export async function countPasses(db: Queryable, repoId?: string): Promise<number> {
  const { rows } = await sql<{ n: number | null }>`select sum(count) as n from upload_passes
    where ${repoId === undefined ? sql`true` : sql`repo_id = ${repoId}`}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** Deletes an upload's passes; returns how many there were. */
export async function deleteUploadPasses(db: Queryable, uploadId: string): Promise<number> {
  const row = await db
    .deleteFrom('upload_passes')
    .where('upload_id', '=', uploadId)
    .returning('count')
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
