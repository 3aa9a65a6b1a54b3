import type { Queryable } from '../../db/bulk.ts';
import { type FlakeProtection, judgeFailedRun, type RunJudgement } from '../../domain/flake-protection.ts';
import type { CheckReport, QueueEvent, TestRun } from '../../domain/queue/index.ts';
import {
  findJudgement,
  retriesSpent,
  runUploadIds,
  saveJudgement,
  spendRetry,
  testOutcomes,
} from '../../store/queue/flake.ts';
import type { QueueRow } from '../../store/queue/queues.ts';
import type { PassBlobs } from '../../store/uploads/passes.ts';
import type { Forge, ForgeRepo } from '../ports.ts';

/** The queue's flake protection: its own setting, else the repository's .mainline.yaml, else off. */
export async function flakeProtectionOf(
  forge: Pick<Forge, 'requiredStatuses'>,
  repo: ForgeRepo,
  queue: Pick<QueueRow, 'flake_protection'>,
  branch: string,
): Promise<FlakeProtection> {
  if (queue.flake_protection !== null) return queue.flake_protection as FlakeProtection;
  return (await forge.requiredStatuses(repo, branch)).flakeProtection ?? 'off';
}

/** The required statuses that failed, or null while any is still pending (nothing to judge yet). */
function failedRequired(run: TestRun, checks: readonly CheckReport[]): string[] | null {
  const names = run.requiredStatuses;
  const outcome = (n: string) => checks.find((c) => c.name === n)?.outcome ?? 'pending';
  if (names.length === 0 || names.some((n) => outcome(n) === 'pending')) return null;
  return names.filter((n) => outcome(n) === 'failed');
}

/**
 * The events that report CI results for a run. When every required status has reported and one
 * failed, and the queue protects against flakes, the run is judged by the tests that failed in its
 * uploaded results: passed (only quarantined tests failed), retried once (only flaky ones), or failed
 * with the culprits named. The judgement is stored for the testing details and the PR's record.
 */
export async function ciEvents(
  db: Queryable,
  input: {
    queue: QueueRow;
    run: TestRun;
    checks: CheckReport[];
    mode: FlakeProtection;
    now: number;
    /** The app's decoded pass blobs (ctx.caches.passBlobs). */
    passBlobs: PassBlobs;
  },
): Promise<QueueEvent[]> {
  const { queue, run, checks } = input;
  const report: QueueEvent = { type: 'ci_reported', runId: run.id, checks };
  const failed = failedRequired(run, checks);
  if (failed === null || failed.length === 0 || input.mode === 'off' || run.kind !== 'main') return [report];
  const uploads = await runUploadIds(db, queue.id, run.id);
  const outcomes = await testOutcomes(db, input.passBlobs, uploads);
  const tests = outcomes.map((t) => ({
    testCaseId: t.test_case_id,
    name: t.name,
    failed: t.failed,
    quarantined: t.quarantined,
    status: t.status,
  }));
  const heads = run.prHeads.filter((h) => run.tested.includes(h.number));
  const spent = Math.max(
    0,
    ...(await Promise.all(heads.map((h) => retriesSpent(db, queue.id, h.number, h.sha)))),
  );
  const judgement = judgeFailedRun({ mode: input.mode, uploads: uploads.length, tests, retriesSpent: spent });
  await record(db, queue.id, run.id, judgement, input.now);
  switch (judgement.kind) {
    case 'ignore':
      return [{ ...report, verdict: { status: 'succeeded', reason: judgement.reason } }];
    case 'retry':
      for (const h of heads) await spendRetry(db, queue.id, h.number, h.sha);
      return [{ type: 'pr_restart_requested', prNumber: run.tested[0] ?? 0 }];
    case 'off':
      return [report];
    default:
      return [
        {
          ...report,
          verdict: {
            status: 'failed',
            reason: `required checks failed: ${failed.join(', ')}; ${judgement.reason}`,
          },
        },
      ];
  }
}

async function record(
  db: Queryable,
  queueId: string,
  runId: string,
  j: RunJudgement,
  at: number,
): Promise<void> {
  if (j.kind === 'off') return;
  const decision = {
    ignore: 'ignored_quarantined',
    retry: 'retried_flaky',
    real_failure: 'real_failure',
    no_results: 'no_results',
  }[j.kind];
  const tests = 'tests' in j ? j.tests : [];
  await saveJudgement(db, {
    queue_id: queueId,
    run_id: runId,
    decision,
    reason: j.reason,
    tests: JSON.stringify(
      tests.map((t) => ({
        test_case_id: t.testCaseId,
        name: t.name,
        quarantined: t.quarantined,
        status: t.status,
      })),
    ),
    at,
  });
}

/** What a run's uploaded results and its judgement show (Mainline extensions of the testing details). */
export async function runTestSummary(db: Queryable, passBlobs: PassBlobs, queueId: string, runId: string) {
  const uploads = await runUploadIds(db, queueId, runId);
  const judged = await findJudgement(db, queueId, runId);
  const outcomes = uploads.length > 0 ? await testOutcomes(db, passBlobs, uploads) : [];
  return {
    ...(uploads.length > 0
      ? {
          testResults: {
            uploads: uploads.length,
            testCases: outcomes.length,
            failures: outcomes.filter((t) => t.failed).length,
          },
        }
      : {}),
    ...(judged !== undefined ? { flakeProtection: judgementRecord(judged) } : {}),
  };
}

/** How flake protection judged a failed run. */
export type JudgementDecision = 'ignored_quarantined' | 'retried_flaky' | 'real_failure' | 'no_results';

export function judgementRecord(j: { decision: string; reason: string; tests: string }) {
  const tests = JSON.parse(j.tests) as {
    test_case_id: string;
    name: string;
    quarantined: boolean;
    status: string;
  }[];
  return {
    decision: j.decision as JudgementDecision,
    reason: j.reason,
    tests: tests.map((t) => ({
      testId: t.test_case_id,
      name: t.name,
      quarantined: t.quarantined,
      status: t.status,
    })),
  };
}
