import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';
import { decodeDetailsV1, decodeOrdinalsV1, encodePassesV1, type PassEntryV1 } from './frozen/pass-blobs.ts';

/**
 * Passes move from a row each (`test_passes`, keyed by test and time) to one row per upload
 * (`upload_passes`): the passing tests' ordinals, sorted, and their times, retries and durations
 * (the format in frozen/pass-blobs.ts, as it shipped; store/uploads/pass-codec.ts reads it today). A row per
 * pass landed next to each test's earlier ones, so an upload's writes grew with the stored history;
 * now an upload writes one row. Readers look their tests up in the uploads they need (store/uploads/passes.ts).
 *
 * `id` is the blobs' own id, new whenever they are written, so that decoded copies cached by id can
 * never be stale. Indexed by upload, and by repository and latest pass (windowed reads; covering
 * the columns counts need).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const blob = isPostgres(db) ? sql`bytea` : sql`blob`;
  await sql`create table upload_passes (
    id text primary key,
    upload_id text not null unique,
    repo_id text not null,
    count integer not null,
    at_min bigint not null,
    at_max bigint not null,
    ordinals ${blob} not null,
    details ${blob} not null
  )`.execute(db);
  // Covering for counts (store/uploads/passes.ts passBlobsSince): no table row is read to list them.
  await sql`create index upload_passes_recent on upload_passes (repo_id, at_max, at_min, count, id)`.execute(
    db,
  );
  const { rows: uploads } = await sql<{ upload_id: string; repo_id: string }>`
    select distinct p.upload_id, u.repo_id from test_passes p join uploads u on u.id = p.upload_id`.execute(
    db,
  );
  for (const { upload_id, repo_id } of uploads) {
    const { rows } = await sql<{
      ordinal: number;
      at: number;
      retry_index: number;
      duration_ms: number | null;
    }>`
      select t.ordinal, p.at, p.retry_index, p.duration_ms
      from test_passes p join test_cases t on t.id = p.test_case_id
      where p.upload_id = ${upload_id}
      order by p.seq`.execute(db);
    const entries: PassEntryV1[] = rows.map((r) => ({
      ordinal: Number(r.ordinal),
      at: Number(r.at),
      retryIndex: Number(r.retry_index),
      durationMs: r.duration_ms === null ? null : Number(r.duration_ms),
    }));
    const passes = encodePassesV1(entries);
    await sql`insert into upload_passes (id, upload_id, repo_id, count, at_min, at_max, ordinals, details)
      values (${randomUUID()}, ${upload_id}, ${repo_id}, ${passes.count}, ${passes.atMin}, ${passes.atMax},
        ${Buffer.from(passes.ordinals)}, ${Buffer.from(passes.details)})`.execute(db);
  }
  await sql`drop table test_passes`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const clustered = isPostgres(db) ? sql`` : sql` without rowid`;
  await sql`create table test_passes (
    test_case_id text not null,
    at bigint not null,
    upload_id text not null,
    seq integer not null,
    retry_index integer not null,
    duration_ms integer,
    primary key (test_case_id, at, upload_id, seq)
  )${clustered}`.execute(db);
  await sql`create index test_passes_upload on test_passes (upload_id, test_case_id)`.execute(db);
  const { rows: uploads } = await sql<{
    upload_id: string;
    repo_id: string;
    count: number;
    at_min: number;
    at_max: number;
    ordinals: Uint8Array;
    details: Uint8Array;
  }>`select upload_id, repo_id, count, at_min, at_max, ordinals, details from upload_passes`.execute(db);
  for (const u of uploads) {
    const ordinals = decodeOrdinalsV1(u.ordinals);
    const atMin = Number(u.at_min);
    const details = decodeDetailsV1(u.details, Number(u.count));
    const { rows: tests } = await sql<{ id: string; ordinal: number }>`
      select id, ordinal from test_cases where repo_id = ${u.repo_id}`.execute(db);
    const idOf = new Map(tests.map((t) => [Number(t.ordinal), t.id]));
    for (let i = 0; i < ordinals.length; i++) {
      const duration = details.durations[i] as number;
      await sql`insert into test_passes (test_case_id, at, upload_id, seq, retry_index, duration_ms)
        values (${idOf.get(ordinals[i] as number)}, ${atMin + (details.atOffsets[i] as number)},
          ${u.upload_id}, ${i}, ${details.retries[i]}, ${duration < 0 ? null : duration})`.execute(db);
    }
  }
  await sql`drop table upload_passes`.execute(db);
}
