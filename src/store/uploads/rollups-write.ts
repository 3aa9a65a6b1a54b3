// Writes of the test-health rollups (store/uploads/rollups.ts): an upload's failures added in the ingest
// transaction (its counts reach test_run_hours later, folded with other uploads': store/uploads/duration-writes.ts),
// taken back out when retention deletes it, failure hours recomputed from what remains, and a
// repository's rollups rebuilt from its stored results and pass blobs.
import { sql } from 'kysely';
import { chunked, type Queryable } from '../../db/bulk.ts';
import { addToFailingWindows, buildFailingWindows, refreshFailingWindows } from '../dashboard/failing.ts';
import { addUploadDays, removeUploadDurations } from './duration-writes.ts';
import type { EncodedPasses } from './pass-codec.ts';
import { HOUR_MS, hourOf } from './rollups.ts';
import { addPasses, addResults, addRunSums, type RollupResult, type RunSums } from './rollups-run-rows.ts';
import { type Column, upsert } from './rollups-upsert.ts';
import { aligned, storedAttempts } from './upload-attempts.ts';

const FAILURE_COLUMNS: readonly Column[] = [
  ['repo_id', 'text'],
  ['ordinal', 'int4'],
  ['hour', 'int4'],
  ['fingerprint', 'text'],
  ['failures', 'int4'],
  ['last_at', 'int8'],
  ['summary', 'text'],
];
// The least summary is chosen by the database (its collation orders text, as min() does on reads).
const FAILURE_ADD = [
  'failures = test_failure_hours.failures + excluded.failures',
  'last_at = case when excluded.last_at > test_failure_hours.last_at then excluded.last_at else test_failure_hours.last_at end',
  'summary = case when test_failure_hours.summary is null or excluded.summary < test_failure_hours.summary then excluded.summary else test_failure_hours.summary end',
].join(', ');

/** Adds flat test_failure_hours rows (FAILURE_COLUMNS in order) to the ones stored for their key. */
function addFailureRows(db: Queryable, values: readonly unknown[]): Promise<void> {
  return upsert(
    db,
    'test_failure_hours',
    FAILURE_COLUMNS,
    'repo_id, ordinal, hour, fingerprint',
    FAILURE_ADD,
    values,
  );
}

/**
 * Adds an upload's attempts to the rollups (in the ingest transaction, after markUploadPending listed
 * it): its failures to the failure hours and windows, its durations to the days. Its counts are not
 * added to `test_run_hours` here: foldPendingUploads adds the listed uploads' together.
 * `passes` as encoded for `upload_passes`, `results` its failed and skipped results as stored,
 * `ordinalOf` each test's ordinal.
 */
export async function addUploadRollups(
  db: Queryable,
  repoId: string,
  attempts: {
    results: readonly RollupResult[];
    passes: EncodedPasses;
    ordinalOf: (testId: string) => number;
  },
): Promise<void> {
  // Failures by (ordinal, hour, fingerprint): counts and latest times summed here; summaries that
  // differ within one key go in later rounds (a key once per statement), so the database picks the least.
  const groups = new Map<string, { row: unknown[]; summaries: Set<string> }>();
  for (const r of attempts.results) {
    if (r.outcome !== 'failed') continue;
    const ordinal = attempts.ordinalOf(r.test_case_id);
    const hour = hourOf(r.at);
    const fingerprint = r.failure_fingerprint ?? '';
    const summary = r.failure_summary ?? null;
    const key = `${ordinal}|${hour}|${fingerprint}`;
    const group = groups.get(key);
    if (group === undefined) {
      groups.set(key, {
        row: [repoId, ordinal, hour, fingerprint, 1, r.at, summary],
        summaries: new Set(summary === null ? [] : [summary]),
      });
      continue;
    }
    group.row[4] = (group.row[4] as number) + 1;
    if (r.at > (group.row[5] as number)) group.row[5] = r.at;
    if (summary !== null) {
      if (group.row[6] === null) group.row[6] = summary;
      else if (group.row[6] !== summary) group.summaries.add(summary);
    }
  }
  const rounds: unknown[][] = [[]];
  for (const { row, summaries } of groups.values()) {
    (rounds[0] as unknown[]).push(...row);
    let k = 1;
    for (const summary of summaries) {
      if (summary === row[6]) continue;
      rounds[k] ??= [];
      (rounds[k] as unknown[]).push(row[0], row[1], row[2], row[3], 0, row[5], summary);
      k++;
    }
  }
  for (const round of rounds) await addFailureRows(db, round);
  // The dashboard's kept failing-tests windows (store/dashboard/failing.ts) follow the failure rollups
  // (one entry per rollup row added to: a new repository's first upload keeps the windows from them).
  const failures = [...groups.values()].map(({ row }) => ({
    ordinal: row[1] as number,
    hour: row[2] as number,
    failures: row[4] as number,
  }));
  await addToFailingWindows(db, repoId, failures);
  await addUploadDays(db, repoId, attempts);
}

/**
 * Takes an upload's attempts back out of the rollups, before retention deletes them: its passes and
 * results are subtracted from `test_run_hours` (rows left at zero are deleted) unless it is still
 * listed as pending (then unlisting it is all). Returns the (test, hour) pairs with failures, for
 * `refreshFailureHours` once the results are gone.
 */
export async function removeUploadRollups(
  db: Queryable,
  uploadId: string,
): Promise<{ repoId: string; failed: { testId: string; ordinal: number; hour: number }[] } | undefined> {
  const stored = await storedAttempts(db, uploadId);
  if (stored === undefined) return undefined;
  const { repoId, results, passes } = stored;
  const { runsPending } = await removeUploadDurations(db, uploadId, stored);
  const sums: RunSums = new Map();
  if (!runsPending) {
    addPasses(sums, passes);
    addResults(sums, results, stored.ordinalOf);
    await addRunSums(db, repoId, sums, -1);
  }
  for (const [hour, byOrdinal] of sums) {
    for (const part of chunked([...byOrdinal.keys()])) {
      await db
        .deleteFrom('test_run_hours')
        .where('repo_id', '=', repoId)
        .where('hour', '=', hour)
        .where('ordinal', 'in', part)
        .where('passed', '=', 0)
        .where('failed', '=', 0)
        .where('skipped', '=', 0)
        .execute();
    }
  }
  const failed = new Map<string, { testId: string; ordinal: number; hour: number }>();
  for (const r of results) {
    if (r.outcome !== 'failed') continue;
    const hour = hourOf(r.at);
    failed.set(`${r.test_case_id}|${hour}`, { testId: r.test_case_id, ordinal: r.ordinal, hour });
  }
  return { repoId, failed: [...failed.values()] };
}

/** `cast(<column> / HOUR_MS as integer)`: the hour of a stored time, on both engines. */
const hourSql = (column: string) => sql.raw(`cast(${column} / ${HOUR_MS} as integer)`);

/**
 * Recomputes the failure rollups of these (test, hour) pairs from the results stored now (after
 * retention deleted some): their rows are replaced by what the remaining failures give.
 */
export async function refreshFailureHours(
  db: Queryable,
  repoId: string,
  pairs: readonly { testId: string; ordinal: number; hour: number }[],
): Promise<void> {
  for (const part of chunked(pairs, 200)) {
    const wanted = new Set(part.map((p) => `${p.ordinal}|${p.hour}`));
    const lo = Math.min(...part.map((p) => p.hour));
    const hi = Math.max(...part.map((p) => p.hour));
    const ids = [...new Set(part.map((p) => p.testId))];
    const { rows } = await sql<{
      ordinal: number;
      hour: number;
      fingerprint: string;
      failures: number;
      last_at: number;
      summary: string | null;
    }>`select t.ordinal as ordinal, ${hourSql('r.at')} as hour,
        coalesce(r.failure_fingerprint, '') as fingerprint, count(*) as failures, max(r.at) as last_at,
        min(r.failure_summary) as summary
      from test_results r join test_cases t on t.id = r.test_case_id
      where r.test_case_id in (${sql.join(ids)}) and r.outcome = 'failed'
        and r.at >= ${lo * HOUR_MS} and r.at < ${(hi + 1) * HOUR_MS}
      group by t.ordinal, ${hourSql('r.at')}, coalesce(r.failure_fingerprint, '')`.execute(db);
    for (const p of part) {
      await db
        .deleteFrom('test_failure_hours')
        .where('repo_id', '=', repoId)
        .where('ordinal', '=', p.ordinal)
        .where('hour', '=', p.hour)
        .execute();
    }
    const kept = rows
      .filter((r) => wanted.has(`${Number(r.ordinal)}|${Number(r.hour)}`))
      .flatMap((r) => [
        repoId,
        Number(r.ordinal),
        Number(r.hour),
        r.fingerprint,
        Number(r.failures),
        Number(r.last_at),
        r.summary,
      ]);
    await addFailureRows(db, kept);
  }
  await refreshFailingWindows(db, repoId, pairs);
}

/**
 * Recomputes a repository's rollups from its stored results and pass blobs (what migration 0018
 * does for every repository): for data written around ingestion, as `npm run bench`'s seed does.
 * The hour rows then hold every stored upload, so the pending ones stay listed for the means only.
 * The dashboard's failing-tests windows are built again for the hours of `now` (the seed's data is
 * around the real time), so no page read has to.
 */
export async function rebuildRollups(db: Queryable, repoId: string, now = Date.now()): Promise<void> {
  await db
    .updateTable('duration_means_pending')
    .set({ runs_pending: 0 })
    .where('repo_id', '=', repoId)
    .execute();
  await db.deleteFrom('test_run_hours').where('repo_id', '=', repoId).execute();
  await db.deleteFrom('test_failure_hours').where('repo_id', '=', repoId).execute();
  const hour = hourSql('r.at');
  await sql`insert into test_failure_hours (repo_id, ordinal, hour, fingerprint, failures, last_at, summary)
    select r.repo_id, t.ordinal, ${hour}, coalesce(r.failure_fingerprint, ''), count(*), max(r.at),
      min(r.failure_summary)
    from test_results r join test_cases t on t.id = r.test_case_id
    where r.repo_id = ${repoId} and r.outcome = 'failed'
    group by r.repo_id, t.ordinal, ${hour}, coalesce(r.failure_fingerprint, '')`.execute(db);
  await buildFailingWindows(db, repoId, now);
  await sql`insert into test_run_hours
      (repo_id, hour, ordinal, passed, failed, failed_quarantined, skipped, duration_sum_ms, duration_count)
    select r.repo_id, ${hour}, t.ordinal, 0,
      sum(case when r.outcome = 'failed' then 1 else 0 end),
      sum(case when r.outcome = 'failed' and r.quarantined = 1 then 1 else 0 end),
      sum(case when r.outcome = 'skipped' then 1 else 0 end),
      coalesce(sum(r.duration_ms), 0), count(r.duration_ms)
    from test_results r join test_cases t on t.id = r.test_case_id
    where r.repo_id = ${repoId} and r.outcome in ('failed', 'skipped')
    group by r.repo_id, ${hour}, t.ordinal`.execute(db);
  const blobs = await db.selectFrom('upload_passes').select('id').where('repo_id', '=', repoId).execute();
  let sums: RunSums = new Map();
  let keys = 0;
  const flush = async () => {
    await addRunSums(db, repoId, sums, 1);
    sums = new Map();
    keys = 0;
  };
  for (const { id } of blobs) {
    const b = await db
      .selectFrom('upload_passes')
      .select(['count', 'at_min', 'at_max', 'ordinals', 'details'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    addPasses(sums, {
      count: Number(b.count),
      atMin: Number(b.at_min),
      atMax: Number(b.at_max),
      ordinals: aligned(b.ordinals),
      details: aligned(b.details),
    });
    keys += Number(b.count);
    if (keys > 200_000) await flush();
  }
  await flush();
}
