import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * What an upload's rows cost to write, and durations in the rollups:
 * - `test_run_hours` gains each (hour, test)'s summed attempt durations and how many attempts had one
 *   (`duration_sum_ms`, `duration_count`), so the slowest tests and a test's duration trend are read
 *   from the rollups (store/uploads/durations.ts). Filled here from the stored results and pass blobs (decoded
 *   here: a migration imports no live code; the blob format is migration 0012's), so retention, which
 *   subtracts an upload's durations, never takes out what was not added.
 * - PostgreSQL: `test_run_hours` pages are filled to half (fillfactor 50). Every upload of a known
 *   suite adds to one row per test of the hour's rows; with full pages each of those updates wrote a
 *   new tuple elsewhere and an entry in both indexes, with room on the page they are HOT (no index
 *   entry) and the page's old versions are pruned in place.
 * - `test_cases_quarantined` and `test_cases_active` become partial (`quarantined = 1`,
 *   `has_active_monitor = 1`), same columns: their readers only ask for those rows, and a new test
 *   (neither) no longer adds an entry to either.
 */
const HOUR_MS = 3_600_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table test_run_hours add column duration_sum_ms bigint not null default 0`.execute(db);
  await sql`alter table test_run_hours add column duration_count integer not null default 0`.execute(db);
  if (isPostgres(db)) await sql`alter table test_run_hours set (fillfactor = 50)`.execute(db);
  await sql`drop index test_cases_quarantined`.execute(db);
  await sql`create index test_cases_quarantined on test_cases (repo_id, quarantined, name, id) where quarantined = 1`.execute(
    db,
  );
  await sql`drop index test_cases_active`.execute(db);
  await sql`create index test_cases_active on test_cases (has_active_monitor, repo_id) where has_active_monitor = 1`.execute(
    db,
  );
  const hourOf = sql.raw(`cast(r.at / ${HOUR_MS} as integer)`);
  // Every (hour, test) with results has its row already (migration 0018 and ingestion since).
  await sql`insert into test_run_hours
      (repo_id, hour, ordinal, passed, failed, failed_quarantined, skipped, duration_sum_ms, duration_count)
    select r.repo_id, ${hourOf}, t.ordinal, 0, 0, 0, 0, sum(r.duration_ms), count(r.duration_ms)
    from test_results r join test_cases t on t.id = r.test_case_id
    where r.duration_ms is not null
    group by r.repo_id, ${hourOf}, t.ordinal
    on conflict (repo_id, hour, ordinal) do update set
      duration_sum_ms = test_run_hours.duration_sum_ms + excluded.duration_sum_ms,
      duration_count = test_run_hours.duration_count + excluded.duration_count`.execute(db);
  await backfillPasses(db);
}

/** Adds every stored pass's duration to `test_run_hours`, upload by upload, flushing every ~100k keys. */
async function backfillPasses(db: Kysely<unknown>): Promise<void> {
  let sums = new Map<string, { repo: string; hour: number; ordinal: number; ms: number; n: number }>();
  const flush = async () => {
    const rows = [...sums.values()];
    sums = new Map();
    for (let i = 0; i < rows.length; i += 500) {
      const part = rows.slice(i, i + 500);
      await sql`insert into test_run_hours
          (repo_id, hour, ordinal, passed, failed, failed_quarantined, skipped, duration_sum_ms, duration_count)
        values ${sql.join(part.map((r) => sql`(${r.repo}, ${r.hour}, ${r.ordinal}, 0, 0, 0, 0, ${r.ms}, ${r.n})`))}
        on conflict (repo_id, hour, ordinal) do update set
          duration_sum_ms = test_run_hours.duration_sum_ms + excluded.duration_sum_ms,
          duration_count = test_run_hours.duration_count + excluded.duration_count`.execute(db);
    }
  };
  let after = '';
  for (;;) {
    const { rows } = await sql<{
      id: string;
      repo_id: string;
      count: number;
      at_min: number;
      ordinals: Uint8Array;
      details: Uint8Array;
    }>`select id, repo_id, count, at_min, ordinals, details from upload_passes
      where id > ${after} order by id limit 50`.execute(db);
    for (const row of rows) {
      const n = Number(row.count);
      const ordinals = new DataView(row.ordinals.buffer, row.ordinals.byteOffset, row.ordinals.byteLength);
      const details = new DataView(row.details.buffer, row.details.byteOffset, row.details.byteLength);
      for (let i = 0; i < n; i++) {
        // details: n uint32 time offsets, n int32 retry indexes, n int32 durations (-1: none).
        const ms = details.getInt32(n * 8 + i * 4, true);
        if (ms < 0) continue;
        const ordinal = ordinals.getInt32(i * 4, true);
        const hour = Math.floor((Number(row.at_min) + details.getUint32(i * 4, true)) / HOUR_MS);
        const key = `${row.repo_id}|${hour}|${ordinal}`;
        const sum = sums.get(key);
        if (sum === undefined) sums.set(key, { repo: row.repo_id, hour, ordinal, ms, n: 1 });
        else {
          sum.ms += ms;
          sum.n++;
        }
      }
      if (sums.size > 100_000) await flush();
    }
    if (rows.length < 50) break;
    after = (rows[rows.length - 1] as { id: string }).id;
  }
  await flush();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_cases_active`.execute(db);
  await sql`create index test_cases_active on test_cases (has_active_monitor, repo_id)`.execute(db);
  await sql`drop index test_cases_quarantined`.execute(db);
  await sql`create index test_cases_quarantined on test_cases (repo_id, quarantined, name, id)`.execute(db);
  if (isPostgres(db)) await sql`alter table test_run_hours reset (fillfactor)`.execute(db);
  await sql`alter table test_run_hours drop column duration_count`.execute(db);
  await sql`alter table test_run_hours drop column duration_sum_ms`.execute(db);
}
