import { AppError } from '../../domain/errors.ts';
import type { FlakeProtection } from '../../domain/flake-protection.ts';
import {
  getPrRecord,
  isTerminal,
  listQueuedPrs,
  type PrEntry,
  type TestRun,
} from '../../domain/queue/index.ts';
import { recentArchived } from '../../store/dashboard/repo-days.ts';
import { findPullRequest, type GitPullRequestRow } from '../../store/forge/git-prs.ts';
import { archivedPr } from '../../store/queue/archive.ts';
import { listQueues } from '../../store/queue/queues.ts';
import type { AppContext, Caller } from '../context.ts';
import { assertForgeGranted } from '../forge-grants.ts';
import { type Forge, type ForgeKind, forgeKindOf } from '../ports.ts';
import { queueStateOf } from '../queue/apply.ts';
import { flakeProtectionOf } from '../queue/flake-judge.ts';
import { getSubmittedPullRequest } from '../queue/prs.ts';
import { findQueueOf } from '../queue/queues.ts';
import { testingDetails } from '../queue/reads.ts';
import { queueConfigRecord } from '../queue/records.ts';
import { findRepository, type RepoRef, type Repository } from '../repositories.ts';
import {
  CHART_DAY_VIEWS,
  type ChartDayView,
  type QueueCharts,
  queueCharts,
  queueDayCharts,
} from './queue-charts.ts';

const RECENT = 25;

export interface QueuePage {
  readonly repository: Repository;
  readonly settings: ReturnType<typeof queueConfigRecord>;
  /** The queue's flake protection, or undefined when the forge could not be asked. */
  readonly flakeProtection: FlakeProtection | undefined;
  /** PRs in the queue: admitted ones in queue order, then the ones not ready yet. */
  readonly queued: PrEntry[];
  /** PRs that left the queue most recently (merged, failed, cancelled), newest first. */
  readonly finished: PrEntry[];
  /** Test runs, newest first; archived ones are finished runs taken out of the live state. */
  /** Runs as shown: an archived run may be stored without its heads (store/queue/archive.ts), and none is shown. */
  readonly runs: { run: Omit<TestRun, 'prHeads'>; archived: boolean }[];
  readonly targetHead: string;
  /** The forge the repository's queue acts on (src/forge/router.ts). */
  readonly forge: QueueForge;
  /** Merged, time in queue, failures and flakes: hour by hour over 24 h, or day by day (`chartView`). */
  readonly charts: QueueCharts;
  readonly chartView: ChartView;
}

/** The charts' window: the last 24 hours (hourly), or 7 or 30 days (daily). */
export type ChartView = '24h' | ChartDayView;

/** A forge a queue can act on: GitHub, GitLab, or the built-in plain-git forge. */
export type QueueForge = ForgeKind;

/**
 * The forge the queue of this repository acts on, by the forge router's rule: the configured GitLab
 * host first (it wins over an equal GitHub host), then the GitHub host, else plain git.
 */
export function queueForgeOf(
  config: Pick<AppContext['config'], 'github' | 'gitlab'>,
  ref: RepoRef,
): QueueForge {
  return forgeKindOf(ref.host, { github: config.github?.host, gitlab: config.gitlab?.host });
}

/**
 * The queue settings that act on some forges only, and how they act on each (a forge not named: no
 * effect there). As the forges implement them: the plain-git forge talks back to nobody, and the
 * GitLab forge has notes, /mainline commands and a commit status but no draft merge requests or labels.
 */
export const FORGE_SETTINGS: Readonly<Record<string, Partial<Record<QueueForge, string>>>> = {
  commentsEnabled: { github: 'a comment on the pull request', gitlab: 'a note on the merge request' },
  commandsEnabled: {
    github: '/mainline merge and /mainline cancel in a pull request comment',
    gitlab: '/mainline merge and /mainline cancel in a merge request comment',
  },
  statusCheckEnabled: {
    github: 'the commit status mainline/merge-queue on the head',
    gitlab:
      'the commit status mainline/merge-queue on the head; none while the project requires pipelines to succeed',
  },
  createPrsForTestingBranches: { github: 'a draft pull request per test branch' },
  extensionEnabled: { github: 'GitHub labels' },
  labelCommandsEnabled: { github: 'GitHub labels' },
  stateLabelsEnabled: { github: 'GitHub labels' },
  enqueueingLabel: { github: 'GitHub labels' },
};

/** How a queue setting acts on this forge: always for one not in FORGE_SETTINGS, null when it has no effect there. */
export function settingEffect(forge: QueueForge, key: string): { how: string | undefined } | null {
  const per = FORGE_SETTINGS[key];
  if (per === undefined) return { how: undefined };
  const how = per[forge];
  return how === undefined ? null : { how };
}

/** The merge queue of one target branch: its settings, the PRs in it and the recent test runs. */
export async function queuePage(
  ctx: AppContext,
  caller: Caller,
  forge: Forge,
  ref: RepoRef,
  branch: string,
  chartView: ChartView = '24h',
): Promise<QueuePage> {
  const repository = await findRepository(ctx.db, caller, ref);
  const queue = await findQueueOf(ctx, caller, ref, branch);
  let flakeProtection: FlakeProtection | undefined;
  try {
    flakeProtection = await flakeProtectionOf(forge, { ...ref, id: repository.id }, queue.row, branch);
  } catch {
    flakeProtection = undefined;
  }
  const { state } = queue;
  const live = Object.values(state.runs).map((run) => ({ run, archived: false }));
  const archivedRuns = (await recentArchived(ctx.db, queue.row.id, 'run', RECENT)).map((r) => ({
    run: JSON.parse(r.data) as Omit<TestRun, 'prHeads'>,
    archived: true,
  }));
  const liveIds = new Set(live.map((r) => r.run.id));
  const runs = [...live, ...archivedRuns.filter((r) => !liveIds.has(r.run.id))]
    .sort((a, b) => b.run.createdAt - a.run.createdAt)
    .slice(0, RECENT + live.length);
  const finishedLive = state.prs.values().filter((e) => isTerminal(e.state));
  const archivedPrs = (await recentArchived(ctx.db, queue.row.id, 'pr', RECENT)).map(
    (r) => JSON.parse(r.data) as PrEntry,
  );
  const seen = new Set(finishedLive.map((e) => e.id));
  const finished = [...finishedLive, ...archivedPrs.filter((e) => !seen.has(e.id))]
    .sort((a, b) => b.stateChangedAt - a.stateChangedAt)
    .slice(0, RECENT);
  return {
    repository,
    settings: queueConfigRecord(state),
    flakeProtection,
    queued: listQueuedPrs(state),
    finished,
    runs,
    targetHead: state.targetHead,
    forge: queueForgeOf(ctx.config, ref),
    charts:
      chartView === '24h'
        ? await queueCharts(ctx, queue.row.id, state, ctx.now())
        : await queueDayCharts(ctx, queue.row.id, state, ctx.now(), CHART_DAY_VIEWS[chartView]),
    chartView,
  };
}

/** A PR the run's test branch had merged in ahead of the tested ones, and when it merged into the target. */
export interface DependentPr {
  readonly number: number;
  /** When it merged into the target branch, if it did. */
  readonly mergedAt: number | null;
}

/**
 * A test run: exactly what getMergeQueueTestingDetails answers, plus when each PR it depends on
 * merged (a PR that merged before the run was created was in its base already: not a dependency).
 */
export async function runPage(ctx: AppContext, caller: Caller, ref: RepoRef, branch: string, runId: string) {
  const repository = await findRepository(ctx.db, caller, ref);
  const details = await testingDetails(ctx, caller, { repo: ref, targetBranch: branch, testRunId: runId });
  const queue = await findQueueOf(ctx, caller, ref, branch);
  const dependents: DependentPr[] = [];
  for (const n of details.dependentPrs) {
    const entry = getPrRecord(queue.state, n) ?? (await archivedPr(ctx.db, queue.row.id, n));
    dependents.push({ number: n, mergedAt: entry?.state === 'merged' ? entry.stateChangedAt : null });
  }
  return { repository, details, dependents };
}

/** A PR's latest submission to one queue: exactly what getSubmittedPullRequest answers. */
export async function prPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  branch: string,
  prNumber: number,
) {
  const repository = await findRepository(ctx.db, caller, ref);
  const pr = await getSubmittedPullRequest(ctx, caller, {
    repo: ref,
    targetBranch: branch,
    pr: { number: prNumber },
  });
  return { repository, pr };
}

export interface PullPage {
  readonly repository: Repository;
  readonly number: number;
  /** The plain-git forge's record of the PR, when it is registered there. */
  readonly pull: GitPullRequestRow | undefined;
  /** The PR's latest submission to each queue it was submitted to. */
  readonly submissions: { branch: string; entry: PrEntry }[];
}

/** A pull request of a repository on the plain-git forge (the prUrl of testing details points here). */
export async function pullPage(
  ctx: AppContext,
  caller: Caller,
  ref: RepoRef,
  prNumber: number,
): Promise<PullPage> {
  await assertForgeGranted(ctx, caller, ref);
  const repository = await findRepository(ctx.db, caller, ref);
  const pull = await findPullRequest(ctx.db, repository.id, prNumber);
  const submissions: { branch: string; entry: PrEntry }[] = [];
  for (const q of await listQueues(ctx.db, [repository.id])) {
    const state = await queueStateOf(ctx, q);
    const entry = getPrRecord(state, prNumber) ?? (await archivedPr(ctx.db, q.id, prNumber));
    if (entry !== undefined) submissions.push({ branch: q.branch, entry });
  }
  if (pull === undefined && submissions.length === 0) {
    throw new AppError('PR_NOT_FOUND', `No pull request #${prNumber} in this repository`);
  }
  return { repository, number: prNumber, pull, submissions };
}
