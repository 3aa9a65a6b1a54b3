import { HttpError } from './http.ts';
import { type Core, isoNow, type RepoState, type Tx, userJson } from './state.ts';
import type { CheckConclusion, CheckRunState, JsonObject, StatusRecord, StatusState } from './types.ts';

export const STATUS_STATES: readonly StatusState[] = ['pending', 'success', 'failure', 'error'];
export const CHECK_STATUSES = ['queued', 'in_progress', 'completed'] as const;
export const CHECK_CONCLUSIONS: readonly CheckConclusion[] = [
  'success',
  'failure',
  'neutral',
  'cancelled',
  'skipped',
  'timed_out',
  'action_required',
];

/** Branches whose head is sha, as webhook payloads list them. */
async function branchesAt(repo: RepoState, sha: string): Promise<JsonObject[]> {
  const out: JsonObject[] = [];
  for (const [name, head] of await repo.git.branches()) if (head === sha) out.push({ name, commit: { sha } });
  return out;
}

export function statusJson(core: Core, repo: RepoState, s: StatusRecord): JsonObject {
  return {
    id: s.id,
    node_id: `SC_${s.id}`,
    url: core.apiUrl(repo, `/statuses/${s.sha}`),
    state: s.state,
    context: s.context,
    description: s.description,
    target_url: s.targetUrl,
    creator: userJson(s.creator),
    created_at: s.createdAt,
    updated_at: s.createdAt,
  };
}

export interface NewStatus {
  state: StatusState;
  context: string;
  description: string | null;
  targetUrl: string | null;
}

export async function addStatus(
  core: Core,
  tx: Tx,
  repo: RepoState,
  sha: string,
  req: NewStatus,
  creator: string,
): Promise<StatusRecord> {
  const status: StatusRecord = { id: core.nextId(), sha, ...req, creator, createdAt: isoNow() };
  repo.statuses.push(status);
  core.emit(
    tx,
    repo,
    'status',
    {
      id: status.id,
      sha,
      name: `${repo.owner}/${repo.name}`,
      state: status.state,
      context: status.context,
      description: status.description,
      target_url: status.targetUrl,
      commit: { sha },
      branches: await branchesAt(repo, sha),
      created_at: status.createdAt,
      updated_at: status.createdAt,
    },
    creator,
  );
  return status;
}

/** GET /commits/{ref}/status: the latest status per context and their combination. */
export function combinedStatus(core: Core, repo: RepoState, sha: string): JsonObject {
  const latest = new Map<string, StatusRecord>();
  for (const s of repo.statuses) if (s.sha === sha) latest.set(s.context, s);
  const statuses = [...latest.values()];
  const states = statuses.map((s) => s.state);
  const state = states.some((s) => s === 'failure' || s === 'error')
    ? 'failure'
    : states.length === 0 || states.includes('pending')
      ? 'pending'
      : 'success';
  return {
    state,
    sha,
    total_count: statuses.length,
    statuses: statuses.map((s) => statusJson(core, repo, s)),
    repository: core.repoJson(repo),
    commit_url: core.apiUrl(repo, `/commits/${sha}`),
  };
}

export function checkRunJson(core: Core, repo: RepoState, run: CheckRunState): JsonObject {
  return {
    id: run.id,
    node_id: `CR_${run.id}`,
    name: run.name,
    head_sha: run.headSha,
    status: run.status,
    conclusion: run.conclusion,
    details_url: run.detailsUrl,
    external_id: run.externalId,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: { ...run.output, annotations_count: 0 },
    app: { id: run.app.id, slug: run.app.slug, name: run.app.slug },
    check_suite: { id: run.suiteId },
    url: core.apiUrl(repo, `/check-runs/${run.id}`),
    html_url: core.htmlUrl(repo, `/runs/${run.id}`),
    pull_requests: [],
  };
}

export interface CheckRunInput {
  name: string;
  headSha: string;
  status: CheckRunState['status'];
  conclusion: CheckConclusion | null;
  detailsUrl: string | null;
  externalId: string | null;
  output: CheckRunState['output'];
}

export function findCheckRun(repo: RepoState, id: number): CheckRunState {
  const run = repo.checkRuns.get(id);
  if (!run) throw new HttpError(404, 'Not Found');
  return run;
}

export async function createCheckRun(
  core: Core,
  tx: Tx,
  repo: RepoState,
  req: CheckRunInput,
  app: CheckRunState['app'],
  sender: string,
): Promise<CheckRunState> {
  const suiteKey = `${req.headSha} ${app.id}`;
  let suiteId = repo.suites.get(suiteKey);
  if (suiteId === undefined) {
    suiteId = core.nextId();
    repo.suites.set(suiteKey, suiteId);
  }
  const completed = req.conclusion !== null || req.status === 'completed';
  if (completed && req.conclusion === null) {
    throw new HttpError(422, 'Invalid request.\n\nconclusion is required when status is completed.');
  }
  const now = isoNow();
  const run: CheckRunState = {
    id: core.nextId(),
    ...req,
    status: completed ? 'completed' : req.status,
    startedAt: now,
    completedAt: completed ? now : null,
    app,
    suiteId,
  };
  repo.checkRuns.set(run.id, run);
  core.emit(tx, repo, 'check_run', { action: 'created', check_run: checkRunJson(core, repo, run) }, sender);
  if (completed) await emitCompleted(core, tx, repo, run, sender);
  return run;
}

export interface CheckRunPatch {
  name?: string | null;
  status?: CheckRunState['status'] | null;
  conclusion?: CheckConclusion | null;
  detailsUrl?: string | null;
  externalId?: string | null;
  output?: CheckRunState['output'] | null;
}

export async function updateCheckRun(
  core: Core,
  tx: Tx,
  repo: RepoState,
  run: CheckRunState,
  patch: CheckRunPatch,
  sender: string,
): Promise<void> {
  const wasCompleted = run.status === 'completed';
  if (patch.name) run.name = patch.name;
  if (patch.detailsUrl) run.detailsUrl = patch.detailsUrl;
  if (patch.externalId) run.externalId = patch.externalId;
  if (patch.output) run.output = patch.output;
  if (patch.status) run.status = patch.status;
  if (patch.conclusion) {
    run.conclusion = patch.conclusion;
    run.status = 'completed';
  }
  if (run.status === 'completed' && run.conclusion === null) {
    throw new HttpError(422, 'Invalid request.\n\nconclusion is required when status is completed.');
  }
  if (run.status !== 'completed') run.conclusion = null;
  if (run.status === 'completed' && !wasCompleted) {
    run.completedAt = isoNow();
    await emitCompleted(core, tx, repo, run, sender);
  }
}

/** check_run completed, and check_suite completed once every run of the suite is. */
async function emitCompleted(core: Core, tx: Tx, repo: RepoState, run: CheckRunState, sender: string) {
  core.emit(tx, repo, 'check_run', { action: 'completed', check_run: checkRunJson(core, repo, run) }, sender);
  // The latest run of each name counts (a re-run replaces the one it re-runs).
  const latest = new Map<string, CheckRunState>();
  for (const r of repo.checkRuns.values()) if (r.suiteId === run.suiteId) latest.set(r.name, r);
  const suite = [...latest.values()];
  if (suite.some((r) => r.status !== 'completed')) return;
  const bad = ['failure', 'cancelled', 'timed_out', 'action_required'];
  const failed = suite.find((r) => bad.includes(r.conclusion ?? ''));
  const allNeutral = suite.every((r) => r.conclusion === 'neutral' || r.conclusion === 'skipped');
  const conclusion = failed ? failed.conclusion : allNeutral ? 'neutral' : 'success';
  const branches = await branchesAt(repo, run.headSha);
  core.emit(
    tx,
    repo,
    'check_suite',
    {
      action: 'completed',
      check_suite: {
        id: run.suiteId,
        head_sha: run.headSha,
        head_branch: (branches[0]?.['name'] as string | undefined) ?? null,
        status: 'completed',
        conclusion,
        app: { id: run.app.id, slug: run.app.slug },
        pull_requests: [],
      },
    },
    sender,
  );
}

/** Check runs at sha, newest first; by default only the latest run of each name (GitHub's filter=latest). */
export function checkRunsAt(repo: RepoState, sha: string, query: URLSearchParams): CheckRunState[] {
  let runs = [...repo.checkRuns.values()].filter((r) => r.headSha === sha).reverse();
  if (query.get('filter') !== 'all') {
    const seen = new Set<string>();
    runs = runs.filter((r) => !seen.has(r.name) && seen.add(r.name));
  }
  const name = query.get('check_name');
  if (name !== null) runs = runs.filter((r) => r.name === name);
  const status = query.get('status');
  if (status !== null) runs = runs.filter((r) => r.status === status);
  return runs;
}
