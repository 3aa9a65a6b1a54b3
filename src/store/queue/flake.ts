import { chunked, type Queryable } from '../../db/bulk.ts';
import type { RunJudgementsTable } from '../schema.ts';
import {
  type PassBlobs,
  passDetails,
  passSet,
  passUploadsByIds,
  testIdsOfOrdinals,
} from '../uploads/passes.ts';

export async function linkRunUpload(
  db: Queryable,
  queueId: string,
  runId: string,
  uploadId: string,
): Promise<void> {
  await db
    .insertInto('run_uploads')
    .values({ queue_id: queueId, run_id: runId, upload_id: uploadId })
    .onConflict((oc) => oc.columns(['queue_id', 'run_id', 'upload_id']).doNothing())
    .execute();
}

export async function runUploadIds(db: Queryable, queueId: string, runId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('run_uploads')
    .select('upload_id')
    .where('queue_id', '=', queueId)
    .where('run_id', '=', runId)
    .execute();
  return rows.map((r) => r.upload_id);
}

/** One test's outcome within a run's uploads, with its health now. */
export interface RunTestOutcome {
  test_case_id: string;
  name: string;
  /** Whether its last attempt in these uploads failed (a failure retried into a pass is not a failure). */
  failed: boolean;
  quarantined: boolean;
  status: string;
}

/** Every test of these uploads with its last attempt's outcome and its current status and quarantine. */
export async function testOutcomes(
  db: Queryable,
  blobs: PassBlobs,
  uploadIds: readonly string[],
): Promise<RunTestOutcome[]> {
  // The last attempt of each test: latest first, then highest retry; on a tie a pass is later (a
  // failure retried into a pass is not a failure).
  const last = new Map<string, { outcome: string; at: number; retry: number }>();
  const consider = (id: string, outcome: string, at: number, retry: number) => {
    const prev = last.get(id);
    const later =
      prev === undefined ||
      at > prev.at ||
      (at === prev.at && (retry > prev.retry || (retry === prev.retry && outcome === 'passed')));
    if (later) last.set(id, { outcome, at, retry });
  };
  for (const part of chunked(uploadIds)) {
    const rows = await db
      .selectFrom('test_results')
      .select(['test_case_id', 'outcome', 'at', 'retry_index'])
      .where('upload_id', 'in', part)
      .where('outcome', '!=', 'skipped')
      .execute();
    for (const r of rows) consider(r.test_case_id, r.outcome, Number(r.at), r.retry_index);
  }
  for (const upload of await passUploadsByIds(db, uploadIds)) {
    const set = await passSet(db, blobs, upload);
    const details = await passDetails(db, blobs, upload);
    const ids = await testIdsOfOrdinals(db, upload.repoId, new Set(set.ordinals));
    for (let i = 0; i < set.ordinals.length; i++) {
      const id = ids.get(set.ordinals[i] as number);
      if (id === undefined) continue;
      consider(id, 'passed', upload.atMin + (details.atOffsets[i] as number), details.retries[i] as number);
    }
  }
  const out: RunTestOutcome[] = [];
  for (const part of chunked([...last.keys()])) {
    const rows = await db
      .selectFrom('test_cases')
      .select(['id', 'name', 'quarantined', 'status'])
      .where('id', 'in', part)
      .execute();
    for (const r of rows) {
      out.push({
        test_case_id: r.id,
        name: r.name,
        failed: last.get(r.id)?.outcome === 'failed',
        quarantined: r.quarantined === 1,
        status: r.status,
      });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export async function saveJudgement(db: Queryable, row: RunJudgementsTable): Promise<void> {
  const { queue_id: _q, run_id: _r, ...update } = row;
  await db
    .insertInto('run_judgements')
    .values(row)
    .onConflict((oc) => oc.columns(['queue_id', 'run_id']).doUpdateSet(update))
    .execute();
}

export function findJudgement(
  db: Queryable,
  queueId: string,
  runId: string,
): Promise<RunJudgementsTable | undefined> {
  return db
    .selectFrom('run_judgements')
    .selectAll()
    .where('queue_id', '=', queueId)
    .where('run_id', '=', runId)
    .executeTakeFirst();
}

export async function retriesSpent(
  db: Queryable,
  queueId: string,
  prNumber: number,
  headSha: string,
): Promise<number> {
  const row = await db
    .selectFrom('flake_retries')
    .select('retries')
    .where('queue_id', '=', queueId)
    .where('pr_number', '=', prNumber)
    .where('head_sha', '=', headSha)
    .executeTakeFirst();
  return row?.retries ?? 0;
}

export async function spendRetry(
  db: Queryable,
  queueId: string,
  prNumber: number,
  headSha: string,
): Promise<void> {
  await db
    .insertInto('flake_retries')
    .values({ queue_id: queueId, pr_number: prNumber, head_sha: headSha, retries: 1 })
    .onConflict((oc) =>
      oc
        .columns(['queue_id', 'pr_number', 'head_sha'])
        .doUpdateSet((eb) => ({ retries: eb('flake_retries.retries', '+', 1) })),
    )
    .execute();
}

export async function setFlakeProtection(db: Queryable, queueId: string, mode: string): Promise<void> {
  await db.updateTable('merge_queues').set({ flake_protection: mode }).where('id', '=', queueId).execute();
}

/** A queue's judgements made since `since`, newest first. */
export function judgementsSince(
  db: Queryable,
  queueId: string,
  since: number,
): Promise<RunJudgementsTable[]> {
  return db
    .selectFrom('run_judgements')
    .selectAll()
    .where('queue_id', '=', queueId)
    .where('at', '>=', since)
    .orderBy('at', 'desc')
    .limit(100)
    .execute();
}
