// When a GitHub Actions run of a fork pull request may stand in for an API token: pure rules over what
// GitHub said about the run. The run is trusted for one setImpactedTargets call (docs/security.md).

/** What GitHub says about a workflow run (`GET /repos/{owner}/{repo}/actions/runs/{run_id}`). */
export interface WorkflowRun {
  readonly id: number;
  /** `pull_request`, `push`, `pull_request_target`, … */
  readonly event: string;
  /** `queued`, `in_progress`, `completed`, … */
  readonly status: string;
  readonly headSha: string;
  /** `repository.full_name`: the repository the run belongs to. */
  readonly repositoryFullName: string;
  /** `head_repository.full_name`: where the run's code comes from (the fork), null when GitHub gives none. */
  readonly headRepositoryFullName: string | null;
  /** `run_started_at` of the current attempt (else `created_at`), epoch milliseconds. */
  readonly startedAt: number;
}

/**
 * How long after its (current attempt's) start a run may still vouch for an upload: 6 hours, the
 * longest a job runs on GitHub's hosted runners. The upload step runs inside that job; a later upload
 * needs a re-run of the workflow (a new attempt starts the clock again).
 */
export const FORK_RUN_MAX_AGE_MS = 6 * 3_600_000;

/** What the call claims: the repository (owner/name) and the PR head the targets are for. */
export interface ForkRunClaim {
  readonly repositoryFullName: string;
  readonly headSha: string;
}

/**
 * Why the run cannot vouch for the claim (a sentence saying what is wrong), or undefined when it can:
 * the run belongs to the claimed repository, was started by a `pull_request` event from a fork, is
 * still running, started at most FORK_RUN_MAX_AGE_MS ago, and ran at exactly the claimed head.
 */
export function forkRunRefusal(run: WorkflowRun, claim: ForkRunClaim, now: number): string | undefined {
  const repo = claim.repositoryFullName;
  if (run.repositoryFullName.toLowerCase() !== repo.toLowerCase()) {
    return `GitHub Actions run ${run.id} is not a run of ${repo}`;
  }
  if (run.event !== 'pull_request') {
    return `GitHub Actions run ${run.id} was started by a "${run.event}" event; only a pull_request run of a fork is accepted instead of an API token`;
  }
  const head = run.headRepositoryFullName;
  if (head === null || head.toLowerCase() === repo.toLowerCase()) {
    return `GitHub Actions run ${run.id} is not from a fork; a run of ${repo} itself has the repository's secrets: send an API token in x-api-token`;
  }
  if (run.status === 'completed') {
    return `GitHub Actions run ${run.id} has completed; only a run still in progress is accepted (send the upload from the run itself)`;
  }
  if (now - run.startedAt > FORK_RUN_MAX_AGE_MS) {
    return `GitHub Actions run ${run.id} started more than ${FORK_RUN_MAX_AGE_MS / 3_600_000} hours ago; re-run the workflow to upload from a fresh run`;
  }
  if (run.headSha.toLowerCase() !== claim.headSha.toLowerCase()) {
    return `GitHub Actions run ${run.id} ran at ${run.headSha}, not at the pull request head ${claim.headSha} named in pr.sha`;
  }
  return undefined;
}

/** The run id of an `x-forked-workflow-run-id` header (GitHub's `github.run_id`), or undefined when it is not one. */
export function parseRunId(header: string): number | undefined {
  const value = header.trim();
  if (!/^[1-9][0-9]{0,15}$/.test(value)) return undefined;
  const id = Number(value);
  return Number.isSafeInteger(id) ? id : undefined;
}
