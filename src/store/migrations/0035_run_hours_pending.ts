import { type Kysely, sql } from 'kysely';
import { decodeDetailsV1, decodeOrdinalsV1 } from './frozen/pass-blobs.ts';

/**
 * An upload's counts reach `test_run_hours` after its answer, with other uploads' (issue 25): adding
 * a 5,000-test upload to one row per test was a third of the ingest transaction, and the same suite
 * run again within the hour adds to the same rows, so N uploads folded together cost one upsert.
 * Ingest lists the upload in `duration_means_pending` (migration 0030) with `runs_pending = 1`;
 * the fold (store/uploads/duration-writes.ts foldPendingUploads) adds the listed uploads' attempts
 * to the hour rows and the means and unlists them in one transaction, and every reader of the hour
 * rows folds first. Rows listed before this migration (0) have their counts in the hour rows already.
 * Down: the counts of uploads listed with 1 are added to the hour rows, as the versions before
 * this expect of every upload (results by SQL, passes decoded with migration 0012's format).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table duration_means_pending add column runs_pending integer not null default 0`.execute(
    db,
  );
}

const HOUR_MS = 3_600_000;

export async function down(db: Kysely<unknown>): Promise<void> {
  const hourOf = sql.raw(`cast(r.at / ${HOUR_MS} as integer)`);
  await sql`insert into test_run_hours
      (repo_id, hour, ordinal, passed, failed, failed_quarantined, skipped, duration_sum_ms, duration_count)
    select r.repo_id, ${hourOf}, t.ordinal, 0,
      sum(case when r.outcome = 'failed' then 1 else 0 end),
      sum(case when r.outcome = 'failed' and r.quarantined = 1 then 1 else 0 end),
      sum(case when r.outcome = 'skipped' then 1 else 0 end),
      coalesce(sum(r.duration_ms), 0), count(r.duration_ms)
    from test_results r join test_cases t on t.id = r.test_case_id
    where r.upload_id in (select upload_id from duration_means_pending where runs_pending = 1)
    group by r.repo_id, ${hourOf}, t.ordinal
    on conflict (repo_id, hour, ordinal) do update set
      failed = test_run_hours.failed + excluded.failed,
      failed_quarantined = test_run_hours.failed_quarantined + excluded.failed_quarantined,
      skipped = test_run_hours.skipped + excluded.skipped,
      duration_sum_ms = test_run_hours.duration_sum_ms + excluded.duration_sum_ms,
      duration_count = test_run_hours.duration_count + excluded.duration_count`.execute(db);
  const { rows } = await sql<{
    repo_id: string;
    count: number;
    at_min: number;
    ordinals: Uint8Array;
    details: Uint8Array;
  }>`select p.repo_id, p.count, p.at_min, p.ordinals, p.details from upload_passes p
    where p.upload_id in (select upload_id from duration_means_pending where runs_pending = 1)`.execute(db);
  const sums = new Map<
    string,
    { repo: string; hour: number; ordinal: number; n: number; ms: number; timed: number }
  >();
  for (const row of rows) {
    const n = Number(row.count);
    const ordinals = decodeOrdinalsV1(row.ordinals);
    const details = decodeDetailsV1(row.details, n);
    for (let i = 0; i < n; i++) {
      const ordinal = ordinals[i] as number;
      const hour = Math.floor((Number(row.at_min) + (details.atOffsets[i] as number)) / HOUR_MS);
      const key = `${row.repo_id}|${hour}|${ordinal}`;
      let sum = sums.get(key);
      if (sum === undefined) {
        sum = { repo: row.repo_id, hour, ordinal, n: 0, ms: 0, timed: 0 };
        sums.set(key, sum);
      }
      sum.n++;
      const ms = details.durations[i] as number;
      if (ms >= 0) {
        sum.ms += ms;
        sum.timed++;
      }
    }
  }
  const all = [...sums.values()];
  for (let i = 0; i < all.length; i += 500) {
    const part = all.slice(i, i + 500);
    await sql`insert into test_run_hours
        (repo_id, hour, ordinal, passed, failed, failed_quarantined, skipped, duration_sum_ms, duration_count)
      values ${sql.join(part.map((r) => sql`(${r.repo}, ${r.hour}, ${r.ordinal}, ${r.n}, 0, 0, 0, ${r.ms}, ${r.timed})`))}
      on conflict (repo_id, hour, ordinal) do update set
        passed = test_run_hours.passed + excluded.passed,
        duration_sum_ms = test_run_hours.duration_sum_ms + excluded.duration_sum_ms,
        duration_count = test_run_hours.duration_count + excluded.duration_count`.execute(db);
  }
  await sql`alter table duration_means_pending drop column runs_pending`.execute(db);
}
