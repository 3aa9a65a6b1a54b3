// Over ~350 lines: the row type of every table and the Database map, so the whole schema reads in one place beside the migrations.
/**
 * Row types of every table, as Kysely sees them. Conventions that hold on both engines:
 * ids are text (UUID strings) except the auto-assigned ids of append-only tables; times are epoch
 * milliseconds in BIGINT columns; booleans are INTEGER 0/1 (better-sqlite3 cannot bind JS booleans);
 * JSON is text.
 */
import type { Generated } from 'kysely';

export interface OrganizationsTable {
  id: string;
  /** Lower-case URL slug, unique. */
  slug: string;
  created_at: number;
}

export interface ApiTokensTable {
  id: string;
  org_id: string;
  /** Free-text label shown by `mainline token list`. */
  name: string;
  /** The first characters of the token, shown to tell tokens apart; not enough to use it. */
  token_prefix: string;
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  token_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface RepositoriesTable {
  id: string;
  org_id: string;
  /** As first given; shown in responses. */
  host: string;
  owner: string;
  name: string;
  /** Lower-cased copies: repositories match case-insensitively, as on GitHub. */
  host_key: string;
  owner_key: string;
  name_key: string;
  created_at: number;
  /** Incremented by every change to the repository's test health (uploads, recomputes, tickets). */
  health_version: Generated<number>;
  /** Test ordinals handed out so far: the next new test's `test_cases.ordinal` (migration 0011). */
  test_ordinals: Generated<number>;
  /** Raised with every change of a known test's code owners (migration 0032; new tests raise test_ordinals). */
  owners_version: Generated<number>;
}

export interface InstanceSecretsTable {
  name: string;
  /** base64url random bytes. */
  value: string;
  created_at: number;
}

export interface RepoSettingsTable {
  repo_id: string;
  quarantining_enabled: number;
  auto_quarantine_flaky: number;
  /** JSON of domain/health DetectionPolicy. */
  policy: string;
  /** Link for linked tickets, with {id} replaced by the ticket id, e.g. https://linear.app/acme/issue/{id}. */
  ticket_url_template: string | null;
  updated_at: number;
}

export interface UploadsTable {
  id: string;
  repo_id: string;
  /** Client-chosen idempotency key; unique per repository. */
  upload_key: string | null;
  /** 'multipart' or 'bundle'. */
  source: string;
  branch: string;
  commit_sha: string;
  pr_number: number | null;
  job_name: string | null;
  job_url: string | null;
  variant: string;
  created_at: number;
  /** JSON of the response the upload answered with, replayed for a repeated upload_key. */
  result: string;
}

export interface TestCasesTable {
  /** test_case_id: UUID v5 of the test's identity (domain/testid). */
  id: string;
  repo_id: string;
  /** 0, 1, 2, … per repository in the order its tests were first seen; never reused (migration 0011). */
  ordinal: number;
  name: string;
  parent: string | null;
  classname: string | null;
  file: string | null;
  variant: string;
  /** JSON array of owners, from the CODEOWNERS sent with the latest upload that had one. */
  codeowners: string;
  /** HEALTHY | FLAKY | BROKEN */
  status: string;
  status_reason: string;
  status_at: number;
  /** JSON Record<monitorId, MonitorState>. */
  monitors: string;
  /** 1 when a monitor is active or the test is flagged: the periodic pass looks at these. */
  has_active_monitor: number;
  /** JSON ManualFlag or null. */
  manual_flag: string | null;
  /** AUTO | ALWAYS_QUARANTINE | NEVER_QUARANTINE */
  quarantine_override: string;
  quarantined: number;
  /** ALWAYS_QUARANTINE | AUTO_QUARANTINE while quarantined. */
  quarantine_setting: string | null;
  quarantined_at: number | null;
  ticket_id: string | null;
  ticket_url: string | null;
  first_seen_at: number;
  last_seen_at: number;
  /** Distinct PRs with a failure in the 7 days before the test's last evaluation (kept for unhealthy tests); rollup_at: when it last changed. */
  prs_impacted_7d: number;
  rollup_at: number;
}

/**
 * One code owner of one test (migration 0032): `test_cases.codeowners` as rows, written with it
 * (store/tests/cases.ts). Key (repo_id, owner, name, test_id): an owner's tests in the all-tests order.
 */
export interface TestOwnersTable {
  repo_id: string;
  owner: string;
  /** The test's name (never changes), for the list's order. */
  name: string;
  test_id: string;
  ordinal: number;
}

/**
 * The passing attempts of one upload (migration 0012, store/uploads/pass-codec.ts): their tests' ordinals,
 * sorted, and their times, retries and durations. Branch, commit and PR are the upload's. Every other
 * attempt (failed, skipped) is a row of `test_results`.
 */
export interface UploadPassesTable {
  /** The blobs' own id: new whenever they are written (cached decoded copies are keyed by it). */
  id: string;
  upload_id: string;
  repo_id: string;
  count: number;
  /** Earliest and latest pass time (epoch ms). */
  at_min: number;
  at_max: number;
  ordinals: Uint8Array;
  details: Uint8Array;
}

/** A failed or skipped attempt (passes are in `upload_passes`). */
export interface TestResultsTable {
  id: Generated<number>;
  repo_id: string;
  test_case_id: string;
  upload_id: string;
  /** When the attempt ran (epoch ms). */
  at: number;
  branch: string;
  commit_sha: string;
  pr_number: number | null;
  /** failed | skipped (passed before migration 0010) */
  outcome: string;
  retry_index: number;
  duration_ms: number | null;
  failure_fingerprint: string | null;
  failure_summary: string | null;
  /** The failure's text, in `failure_texts` (migration 0013). */
  failure_text_hash: string | null;
  /** 1 when the test was quarantined when this result was ingested. */
  quarantined: number;
}

/** Each distinct failure text once (migration 0013); results refer to it by hash. */
export interface FailureTextsTable {
  hash: string;
  text: string;
  /** When an upload last stored a failure with this text (moved at most daily; migration 0015). */
  last_used_at: number;
}

export interface TestCaseEventsTable {
  id: Generated<number>;
  test_case_id: string;
  at: number;
  /** status | quarantine_override | quarantine | manual_flag | ticket */
  kind: string;
  /** JSON, shaped by kind. */
  data: string;
}

export interface ListSnapshotsTable {
  id: string;
  query_hash: string;
  /** The repository's health_version the snapshot was taken at. */
  version: number;
  total: number;
  created_at: number;
}

export interface ListSnapshotRowsTable {
  snapshot_id: string;
  /** 1-based position in the list's order. */
  pos: number;
  item_id: string;
}

export interface BundleUploadsTable {
  id: string;
  org_id: string;
  /** JSON of the createBundleUpload request (repo, orgUrlSlug, …). */
  request: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  upload_id: string | null;
}

export interface MergeQueuesTable {
  id: string;
  repo_id: string;
  /** Target branch, exactly as git names it. */
  branch: string;
  /**
   * JSON of the engine's QueueState without its PR entries and runs (`prs` and `runs` are empty here):
   * those are rows of queue_prs and queue_runs, so a step writes only the ones it changed.
   */
  header: string;
  /** Incremented on every save; a save expecting another version lost a race. */
  version: number;
  created_at: number;
  updated_at: number;
  /** When the runner should next tick this queue (batching waits, test timeouts). */
  wake_at: number | null;
  /** The runner that drives the queue until lease_until. */
  lease_owner: string | null;
  lease_until: number | null;
  /** off | ignore_quarantined | retry_flaky (Mainline extension of updateQueue); null: from .mainline.yaml, else off. */
  flake_protection: Generated<string | null>;
  /** updateQueue extensionEnabled (0/1): stored and answered only (docs/github.md, labels). */
  extension_enabled: Generated<number>;
  /** The GitHub label that submits a PR to this queue; '' when none. */
  enqueueing_label: Generated<string>;
  /** 0/1: removing the enqueueing label cancels, and the label stays while the PR is queued. */
  label_commands_enabled: Generated<number>;
  /** 0/1: mainline:* labels show a PR's queue state on GitHub. */
  state_labels_enabled: Generated<number>;
}

/** One PR entry of a queue's live state (QueueState.prs), saved with the queue's header. */
export interface QueuePrsTable {
  queue_id: string;
  number: number;
  /** The entry's state, for reads that look for live PRs without parsing them. */
  state: string;
  head_sha: string;
  /** JSON of the PrEntry; since migration 0036 with its first two state changes, the rest in queue_pr_history. */
  data: string;
}

/**
 * Part of a live PR entry's history (PrEntry.history) past the changes its queue_prs row holds (migration
 * 0036): a JSON array of the state changes from index `idx` on, one row per step that added some, so a
 * step writes the changes it made instead of the entry's whole history again.
 */
export interface QueuePrHistoryTable {
  queue_id: string;
  number: number;
  idx: number;
  data: string;
}

/** One test run of a queue's live state (QueueState.runs), saved with the queue's header. */
export interface QueueRunsTable {
  queue_id: string;
  id: string;
  /** Insertion order of the runs in the state (the engine iterates them in it). */
  ord: number;
  status: string;
  test_branch: string;
  test_branch_sha: string | null;
  /** JSON of the TestRun. */
  data: string;
}

export interface QueueActionsTable {
  id: Generated<number>;
  queue_id: string;
  /** JSON of a QueueAction. */
  action: string;
  created_at: number;
  done_at: number | null;
  attempts: Generated<number>;
  last_error: string | null;
  /** Not carried out before this time (ms): the forge answered "not yet" (migration 0031); null: due. */
  not_before: number | null;
}

export interface GitPullRequestsTable {
  repo_id: string;
  number: number;
  title: string;
  author: string;
  head_branch: string;
  base_branch: string;
  /** open | closed | merged */
  state: string;
  created_at: number;
  updated_at: number;
}

export interface CommitStatusesTable {
  repo_id: string;
  sha: string;
  /** The check's name, e.g. "build". */
  context: string;
  /** pending | success | failure | error */
  state: string;
  url: string | null;
  updated_at: number;
}

export interface ImpactedTargetsTable {
  repo_id: string;
  pr_number: number;
  head_sha: string;
  /** JSON: a list of target names, or the string "ALL". */
  targets: string;
  updated_at: number;
}

export interface RunUploadsTable {
  queue_id: string;
  run_id: string;
  upload_id: string;
}

export interface RunJudgementsTable {
  queue_id: string;
  run_id: string;
  /** ignored_quarantined | retried_flaky | real_failure */
  decision: string;
  reason: string;
  /** JSON [{test_case_id, name, quarantined, status}] of the failing tests judged. */
  tests: string;
  at: number;
}

export interface FlakeRetriesTable {
  queue_id: string;
  pr_number: number;
  head_sha: string;
  retries: number;
}

export interface QueueArchiveTable {
  queue_id: string;
  /** pr (a finished submission, key = its id) | run (a finished test run, key = its id) */
  kind: string;
  key: string;
  pr_number: number | null;
  /** The PR's final state (pr rows). */
  state: string | null;
  /** The submission's sequence number (pr rows), for listPullRequests order. */
  seq: number | null;
  /** JSON of the PrEntry or TestRun. */
  data: string;
  archived_at: number;
}

export interface WebhookEndpointsTable {
  id: string;
  org_id: string;
  /** Absolute http(s) URL the events are POSTed to. */
  url: string;
  /** `whsec_…`: the HMAC-SHA256 key of the x-mainline-signature-256 header. */
  secret: string;
  /** JSON array of the event types the endpoint receives. */
  event_types: string;
  description: string | null;
  created_at: number;
  /** Set while the endpoint is disabled: nothing is enqueued or sent to it. */
  disabled_at: number | null;
}

export interface WebhookDeliveriesTable {
  /** The x-mainline-delivery header: receivers de-duplicate on it. */
  id: string;
  endpoint_id: string;
  org_id: string;
  /** The body's `id`: one event delivered to several endpoints has one event id. */
  event_id: string;
  event_type: string;
  /** JSON of the event's `data`. */
  payload: string;
  created_at: number;
  /** When the dispatcher sends (or, while claimed, may reclaim) it. */
  next_attempt_at: number;
  attempts: Generated<number>;
  /** HTTP status of the last attempt; null when it got no response. */
  last_status: number | null;
  last_error: string | null;
  delivered_at: number | null;
  /** Set when the dispatcher gave up. */
  failed_at: number | null;
}

/** A GitHub webhook delivery, stored before it is acknowledged and processed afterwards. */
export interface GitHubDeliveriesTable {
  id: string;
  event: string;
  action: string | null;
  payload: string;
  received_at: number;
  processed_at: number | null;
  attempts: Generated<number>;
  /** What processing did (or the last error), for operators. */
  outcome: string | null;
}

/** A draft pull request opened on GitHub for a test branch. */
export interface GitHubTestPrsTable {
  repo_id: string;
  test_branch: string;
  pr_number: number;
  created_at: number;
}

/** Which organization may act on a forge account (a GitHub owner on a host); one organization per owner. */
export interface ForgeGrantsTable {
  host_key: string;
  owner_key: string;
  /** The owner's login as given when granted (or as GitHub spells the installation's account). */
  owner: string;
  org_id: string;
  /** The GitHub App installation the grant came from; null for a grant made for a personal token. */
  installation_id: number | null;
  created_at: number;
}

/** Per-repository daily figures of the dashboard's overview (filled on demand, see docs/dashboard.md). */
export interface DashboardRepoDaysTable {
  repo_id: string;
  /** Start of the UTC day, epoch ms. */
  day: number;
  /** FLAKY / BROKEN / quarantined tests at the end of the day (or when computed, for today). */
  flaky: number;
  broken: number;
  quarantined: number;
  /** Uploads received that day. */
  uploads: number;
  /** Tests tracked when computed; null for a day first computed after it ended. */
  tests: number | null;
  /** A row computed after its day ended (plus a grace period) is final. */
  computed_at: number;
}

/**
 * Test-health rollups (migration 0018, store/uploads/rollups.ts): one test's attempts in one UTC hour, written
 * in the ingest transaction and taken back out when retention deletes an upload. `hour` is the hour's
 * start / 3,600,000; `ordinal` the test's `test_cases.ordinal`.
 */
export interface TestRunHoursTable {
  repo_id: string;
  hour: number;
  ordinal: number;
  passed: number;
  /** Failed attempts, quarantined or not; `failed_quarantined`: those of a test quarantined when stored. */
  failed: number;
  failed_quarantined: number;
  skipped: number;
  /** Summed durations of the attempts that had one, and how many had one (migration 0023). */
  duration_sum_ms: Generated<number>;
  duration_count: Generated<number>;
}

/**
 * One test's timed attempts in the week of its latest one and the week before, and their mean
 * (migration 0028, store/uploads/durations.ts); `week` is floor((UTC day + 3) / 7).
 */
export interface TestDurationMeansTable {
  repo_id: string;
  ordinal: number;
  week: number;
  cur_sum_ms: number;
  cur_count: number;
  prev_sum_ms: number;
  prev_count: number;
  mean_ms: number | null;
}

/** An upload whose timed attempts are not yet in test_duration_means (migration 0030, store/uploads/duration-writes.ts). */
export interface DurationMeansPendingTable {
  repo_id: string;
  upload_id: string;
  /** 1: the upload's counts are not in test_run_hours yet either (migration 0035). */
  runs_pending: Generated<number>;
}

/** A repository's timed attempts and retried failures in one UTC day (migration 0028, store/uploads/durations.ts). */
export interface RepoTimeDaysTable {
  repo_id: string;
  day: number;
  test_ms: number;
  timed: number;
  retried_failures: number;
  retried_ms: number;
}

/** One test's failures with one fingerprint ('' for none) in one UTC hour (migration 0018). */
export interface TestFailureHoursTable {
  repo_id: string;
  ordinal: number;
  hour: number;
  fingerprint: string;
  failures: number;
  /** The latest failure's time (epoch ms). */
  last_at: number;
  /** The least of the failures' summaries (as the database orders text), null if none had one. */
  summary: string | null;
}

export interface Tables {
  dashboard_repo_days: DashboardRepoDaysTable;
  github_deliveries: GitHubDeliveriesTable;
  github_test_prs: GitHubTestPrsTable;
  forge_grants: ForgeGrantsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  queue_archive: QueueArchiveTable;
  run_uploads: RunUploadsTable;
  run_judgements: RunJudgementsTable;
  flake_retries: FlakeRetriesTable;
  impacted_targets: ImpactedTargetsTable;
  merge_queues: MergeQueuesTable;
  queue_prs: QueuePrsTable;
  queue_pr_history: QueuePrHistoryTable;
  queue_runs: QueueRunsTable;
  queue_actions: QueueActionsTable;
  git_pull_requests: GitPullRequestsTable;
  commit_statuses: CommitStatusesTable;
  repo_settings: RepoSettingsTable;
  uploads: UploadsTable;
  test_cases: TestCasesTable;
  test_owners: TestOwnersTable;
  test_results: TestResultsTable;
  failure_texts: FailureTextsTable;
  upload_passes: UploadPassesTable;
  test_case_events: TestCaseEventsTable;
  test_run_hours: TestRunHoursTable;
  test_failure_hours: TestFailureHoursTable;
  test_duration_means: TestDurationMeansTable;
  duration_means_pending: DurationMeansPendingTable;
  repo_time_days: RepoTimeDaysTable;
  list_snapshots: ListSnapshotsTable;
  list_snapshot_rows: ListSnapshotRowsTable;
  bundle_uploads: BundleUploadsTable;
  instance_secrets: InstanceSecretsTable;
  organizations: OrganizationsTable;
  api_tokens: ApiTokensTable;
  repositories: RepositoriesTable;
}
