import { HttpError, intParam, ok, type RequestContext, type Route, repoOf, route } from './http.ts';
import { type Core, isoNow, type RepoState, userJson } from './state.ts';
import type { JsonObject } from './types.ts';

/** A GitHub Actions workflow run, as the simulator keeps it (sim.startWorkflowRun). */
export interface WorkflowRunState {
  id: number;
  name: string;
  event: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  headSha: string;
  headBranch: string | null;
  /** owner/name of the repository the run's code comes from: a fork's for a fork's pull request. */
  headRepository: string;
  actor: string;
  createdAt: string;
  runStartedAt: string;
  updatedAt: string;
}

/** What a test says about a run it starts; every field but headSha has a default. */
export interface WorkflowRunOptions {
  /** A commit or ref of the repository the run ran at. */
  headSha: string;
  /** Default pull_request. */
  event?: string;
  /** Default owner/name of the repository itself; a fork's run names the fork (e.g. contributor/widgets). */
  headRepository?: string;
  headBranch?: string;
  /** Default in_progress. */
  status?: WorkflowRunState['status'];
  /** When the run (its current attempt) started: ISO date or epoch ms; default now. */
  startedAt?: string | number;
  name?: string;
  actor?: string;
}

/** Runs by repository; GitHub's run ids are global, so are the simulator's (core.nextId). */
const RUNS = new WeakMap<RepoState, Map<number, WorkflowRunState>>();

export function runsOf(repo: RepoState): Map<number, WorkflowRunState> {
  let runs = RUNS.get(repo);
  if (runs === undefined) {
    runs = new Map();
    RUNS.set(repo, runs);
  }
  return runs;
}

/** Records a run (no webhooks: Mainline subscribes to none of the workflow_run events). */
export function addWorkflowRun(core: Core, repo: RepoState, sha: string, opts: WorkflowRunOptions): number {
  const started =
    opts.startedAt === undefined
      ? isoNow()
      : new Date(opts.startedAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const run: WorkflowRunState = {
    id: core.nextId(),
    name: opts.name ?? 'CI',
    event: opts.event ?? 'pull_request',
    status: opts.status ?? 'in_progress',
    conclusion: opts.status === 'completed' ? 'success' : null,
    headSha: sha,
    headBranch: opts.headBranch ?? null,
    headRepository: opts.headRepository ?? `${repo.owner}/${repo.name}`,
    actor: opts.actor ?? 'contributor',
    createdAt: started,
    runStartedAt: started,
    updatedAt: started,
  };
  runsOf(repo).set(run.id, run);
  return run.id;
}

function runJson(core: Core, repo: RepoState, run: WorkflowRunState): JsonObject {
  const [headOwner = '', headName = ''] = run.headRepository.split('/');
  const fork = run.headRepository.toLowerCase() !== `${repo.owner}/${repo.name}`.toLowerCase();
  return {
    id: run.id,
    name: run.name,
    node_id: `WFR_${run.id}`,
    head_branch: run.headBranch,
    head_sha: run.headSha,
    path: '.github/workflows/ci.yaml',
    run_number: run.id,
    run_attempt: 1,
    event: run.event,
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: 1,
    url: core.apiUrl(repo, `/actions/runs/${run.id}`),
    html_url: core.htmlUrl(repo, `/actions/runs/${run.id}`),
    // GitHub leaves pull_requests empty for a run of a fork's pull request.
    pull_requests: [],
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    run_started_at: run.runStartedAt,
    actor: userJson(run.actor),
    triggering_actor: userJson(run.actor),
    repository: core.repoJson(repo),
    head_repository: {
      id: fork ? 0 : repo.id,
      name: headName,
      full_name: run.headRepository,
      owner: { login: headOwner, id: 1, type: 'User' },
      fork,
    },
  };
}

/** GET …/actions/runs/{run_id}: 404 for a run of another repository, as on GitHub. */
async function getRun(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const run = runsOf(repo).get(intParam(ctx, 'run_id'));
  if (run === undefined) throw new HttpError(404, 'Not Found');
  return ok(runJson(ctx.core, repo, run));
}

export const actionRoutes: Route[] = [route('GET', '/repos/{owner}/{repo}/actions/runs/{run_id}', getRun)];
