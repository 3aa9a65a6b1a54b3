import { type Kysely, sql } from 'kysely';

/**
 * Test-health rollups (store/uploads/rollups.ts), so that get-test-details, list-failing-tests and the
 * dashboard's test page read counts instead of a test's results and every upload's passes:
 * - `test_run_hours`: per repository, UTC hour and test (its ordinal) the attempts that passed,
 *   failed (and of those, while quarantined) and were skipped. Keyed hour before test, so that an
 *   upload's rows (one per test it ran, nearly all in one hour) lie together in the B-tree.
 * - `test_failure_hours`: per repository, test, hour and failure fingerprint ('' for none) the
 *   failures, the latest one's time and the least summary. Keyed test first (a test's failure groups
 *   are one range), with an index by hour for list-failing-tests.
 * Both are filled here from the stored results and pass blobs (decoded here: a migration does not
 * import live code; the blob format is migration 0012's).
 */
const HOUR_MS = 3_600_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table test_run_hours (
    repo_id text not null,
    hour integer not null,
    ordinal integer not null,
    passed integer not null,
    failed integer not null,
    failed_quarantined integer not null,
    skipped integer not null,
    primary key (repo_id, hour, ordinal)
  )`.execute(db);
  await sql`create table test_failure_hours (
    repo_id text not null,
    ordinal integer not null,
    hour integer not null,
    fingerprint text not null,
    failures integer not null,
    last_at bigint not null,
    summary text,
    primary key (repo_id, ordinal, hour, fingerprint)
  )`.execute(db);
  await sql`create index test_failure_hours_window on test_failure_hours (repo_id, hour, ordinal, failures)`.execute(
    db,
  );
  const hourOf = sql.raw(`cast(r.at / ${HOUR_MS} as integer)`);
  await sql`insert into test_failure_hours (repo_id, ordinal, hour, fingerprint, failures, last_at, summary)
    select r.repo_id, t.ordinal, ${hourOf}, coalesce(r.failure_fingerprint, ''), count(*), max(r.at),
      min(r.failure_summary)
    from test_results r join test_cases t on t.id = r.test_case_id
    where r.outcome = 'failed'
    group by r.repo_id, t.ordinal, ${hourOf}, coalesce(r.failure_fingerprint, '')`.execute(db);
  await sql`insert into test_run_hours (repo_id, hour, ordinal, passed, failed, failed_quarantined, skipped)
    select r.repo_id, ${hourOf}, t.ordinal, 0,
      sum(case when r.outcome = 'failed' then 1 else 0 end),
      sum(case when r.outcome = 'failed' and r.quarantined = 1 then 1 else 0 end),
      sum(case when r.outcome = 'skipped' then 1 else 0 end)
    from test_results r join test_cases t on t.id = r.test_case_id
    where r.outcome in ('failed', 'skipped')
    group by r.repo_id, ${hourOf}, t.ordinal`.execute(db);
  await backfillPasses(db);
}

/** Adds every stored pass to `test_run_hours`, upload by upload, flushing the sums every ~100k keys. */
async function backfillPasses(db: Kysely<unknown>): Promise<void> {
  let sums = new Map<string, { repo: string; hour: number; ordinal: number; n: number }>();
  const flush = async () => {
    const rows = [...sums.values()];
    sums = new Map();
    for (let i = 0; i < rows.length; i += 500) {
      const part = rows.slice(i, i + 500);
      await sql`insert into test_run_hours (repo_id, hour, ordinal, passed, failed, failed_quarantined, skipped)
        values ${sql.join(part.map((r) => sql`(${r.repo}, ${r.hour}, ${r.ordinal}, ${r.n}, 0, 0, 0)`))}
        on conflict (repo_id, hour, ordinal) do update set passed = test_run_hours.passed + excluded.passed`.execute(
        db,
      );
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
        const ordinal = ordinals.getInt32(i * 4, true);
        const hour = Math.floor((Number(row.at_min) + details.getUint32(i * 4, true)) / HOUR_MS);
        const key = `${row.repo_id}|${hour}|${ordinal}`;
        const sum = sums.get(key);
        if (sum === undefined) sums.set(key, { repo: row.repo_id, hour, ordinal, n: 1 });
        else sum.n++;
      }
      if (sums.size > 100_000) await flush();
    }
    if (rows.length < 50) break;
    after = (rows[rows.length - 1] as { id: string }).id;
  }
  await flush();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table test_failure_hours`.execute(db);
  await sql`drop table test_run_hours`.execute(db);
}
