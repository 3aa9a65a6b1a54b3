import type { Insertable, Updateable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import {
  type Attempt,
  DAY_MS,
  type DetectionPolicy,
  evaluateHealth,
  HOUR_MS,
  type ManualFlag,
  type MonitorState,
  type Outcome,
  quarantineDecision,
  type StatusValue,
} from '../../domain/health/index.ts';
import type { TestCaseEventsTable, TestCasesTable } from '../../store/schema.ts';
import { findTestCases, type TestCaseRow, updateTestCases } from '../../store/tests/cases.ts';
import { insertEvents } from '../../store/tests/events.ts';
import type { PassBlobs } from '../../store/uploads/passes.ts';
import { type AttemptRow, loadAttempts, prsImpacted } from '../../store/uploads/results.ts';
import { enqueueHealthEvents } from '../webhooks-out/health.ts';
import type { HealthSettings } from './settings.ts';

/** What one recompute changed, for the caller's response and for outgoing events later. */
export interface RecomputeOutcome {
  /** Test ids whose status changed. */
  readonly statusChanged: string[];
  /** Quarantine state of every recomputed test after the recompute. */
  readonly quarantined: Map<string, boolean>;
  /** Whether a test row changed (and the repository's health_version was bumped once). */
  bumped: boolean;
  /** Every recomputed test's row as stored now (its patch applied). */
  readonly rows: TestCaseRow[];
}

/**
 * How far back the windowed monitors look. Pass-on-retry is not windowed: it reads every attempt on
 * the commits an upload touched (however old), and its episode state carries the rest.
 */
function windowedSince(policy: DetectionPolicy, now: number): number | undefined {
  const hours = [
    ...policy.failureRateMonitors
      .filter((m) => m.enabled)
      .map((m) => Math.max(m.windowHours, m.staleTimeoutHours ?? 0)),
    ...policy.failureCountMonitors.filter((m) => m.enabled).map((m) => m.windowHours),
  ];
  return hours.length === 0 ? undefined : now - Math.max(...hours) * HOUR_MS;
}

function toAttempt(r: AttemptRow): Attempt {
  return {
    at: r.at,
    branch: r.branch,
    commitSha: r.commit_sha,
    prNumber: r.pr_number,
    outcome: r.outcome as Outcome,
    uploadId: r.upload_id,
    retryIndex: r.retry_index,
  };
}

function hasActive(monitors: Record<string, MonitorState>, flag: ManualFlag | null): boolean {
  return flag?.flagged === true || Object.values(monitors).some((m) => m.kind === 'active');
}

type Patch = Updateable<TestCasesTable>;
type NewEvent = Insertable<TestCaseEventsTable>;

function evaluateOne(row: TestCaseRow, attempts: Attempt[], settings: HealthSettings, now: number) {
  const monitors = JSON.parse(row.monitors) as Record<string, MonitorState>;
  const manualFlag = row.manual_flag === null ? null : (JSON.parse(row.manual_flag) as ManualFlag);
  const evaluation = evaluateHealth(
    {
      attempts,
      monitors,
      manualFlag,
      status: { value: row.status as StatusValue, reason: row.status_reason, timestamp: row.status_at },
    },
    settings.policy,
    now,
  );
  const patch: Patch = {};
  const events: NewEvent[] = [];
  const monitorsJson = JSON.stringify(evaluation.monitors);
  if (monitorsJson !== row.monitors) patch.monitors = monitorsJson;
  const active = hasActive(evaluation.monitors, manualFlag) ? 1 : 0;
  if (active !== row.has_active_monitor) patch.has_active_monitor = active;
  const t = evaluation.transition;
  if (t !== null) {
    Object.assign(patch, { status: t.to, status_reason: t.reason, status_at: t.at });
    events.push({ test_case_id: row.id, at: t.at, kind: 'status', data: JSON.stringify(t) });
  } else if (evaluation.status.reason !== row.status_reason) {
    patch.status_reason = evaluation.status.reason;
  }
  return { status: evaluation.status.value, patch, events };
}

function quarantinePatch(
  row: TestCaseRow,
  status: StatusValue,
  settings: HealthSettings,
  now: number,
  by: string,
) {
  const decision = quarantineDecision({
    status,
    override: row.quarantine_override as 'AUTO' | 'ALWAYS_QUARANTINE' | 'NEVER_QUARANTINE',
    settings: settings.quarantine,
  });
  const was = row.quarantined === 1;
  if (was === decision.quarantined && (row.quarantine_setting ?? null) === decision.setting) {
    return { quarantined: was, patch: {} as Patch, events: [] as NewEvent[] };
  }
  const patch: Patch = {
    quarantined: decision.quarantined ? 1 : 0,
    quarantine_setting: decision.setting,
    quarantined_at: decision.quarantined ? (was ? row.quarantined_at : now) : null,
  };
  const data = JSON.stringify({
    quarantined: decision.quarantined,
    setting: decision.setting,
    reason: decision.reason,
    by,
  });
  const events =
    was === decision.quarantined ? [] : [{ test_case_id: row.id, at: now, kind: 'quarantine', data }];
  return { quarantined: decision.quarantined, patch, events };
}

/**
 * Re-evaluates the health and quarantine of the given tests of one repository and stores what
 * changed: status (with a history event per transition), monitor states, quarantine, and the
 * PRs-impacted rollup of unhealthy tests. Runs inside the caller's transaction.
 */
export async function recomputeTests(
  db: Queryable,
  repoId: string,
  testIds: readonly string[],
  settings: HealthSettings,
  options: {
    now: number;
    commitShas: readonly string[];
    by: string;
    rows?: readonly TestCaseRow[];
    /** The app's decoded pass blobs (ctx.caches.passBlobs). */
    passBlobs: PassBlobs;
  },
): Promise<RecomputeOutcome> {
  const { now } = options;
  const rows = options.rows ?? (await findTestCases(db, repoId, testIds));
  const attempts = await loadAttempts(
    db,
    options.passBlobs,
    repoId,
    rows.map((r) => ({ id: r.id, ordinal: r.ordinal })),
    { commitShas: options.commitShas, since: windowedSince(settings.policy, now) },
  );
  const byTest = new Map<string, Attempt[]>();
  for (const a of attempts) {
    const list = byTest.get(a.test_case_id);
    if (list === undefined) byTest.set(a.test_case_id, [toAttempt(a)]);
    else list.push(toAttempt(a));
  }

  const outcome: RecomputeOutcome = { statusChanged: [], quarantined: new Map(), bumped: false, rows: [] };
  const patches = new Map<string, Patch>();
  const events: NewEvent[] = [];
  const unhealthy: string[] = [];
  for (const row of rows) {
    const health = evaluateOne(row, byTest.get(row.id) ?? [], settings, now);
    const quarantine = quarantinePatch(row, health.status, settings, now, options.by);
    patches.set(row.id, { ...health.patch, ...quarantine.patch });
    events.push(...health.events, ...quarantine.events);
    if (health.patch.status !== undefined) outcome.statusChanged.push(row.id);
    if (health.status !== 'HEALTHY') unhealthy.push(row.id);
    outcome.quarantined.set(row.id, quarantine.quarantined);
  }
  const prs = await prsImpacted(db, unhealthy, now - 7 * DAY_MS);
  const rowOf = new Map(rows.map((r) => [r.id, r]));
  for (const id of unhealthy) {
    const count = prs.get(id) ?? 0;
    // Written only when it changed (an unhealthy test failing upload after upload keeps its row).
    if (count === rowOf.get(id)?.prs_impacted_7d) continue;
    const patch = patches.get(id) ?? {};
    Object.assign(patch, { prs_impacted_7d: count, rollup_at: now });
    patches.set(id, patch);
  }
  const updates: { id: string; patch: Patch }[] = [];
  for (const row of rows) {
    const patch = patches.get(row.id) ?? {};
    if (Object.keys(patch).length === 0) {
      outcome.rows.push(row);
      continue;
    }
    updates.push({ id: row.id, patch });
    outcome.rows.push({ ...row, ...patch } as TestCaseRow);
  }
  await updateTestCases(db, repoId, updates);
  const changed = updates.length > 0;
  await insertEvents(db, events);
  await enqueueHealthEvents(db, repoId, rows, events, now);
  outcome.bumped = changed;
  return outcome;
}
