import { AppError } from '../../domain/errors.ts';
import {
  type CheckResult,
  getTestingDetails,
  listQueuedPrs,
  type PrEntry,
  type QueueState,
  TERMINAL,
} from '../../domain/queue/index.ts';
import {
  archivedPrCountsOf,
  archivedPrs,
  archivedPrsByNumber,
  archivedRun,
} from '../../store/queue/archive.ts';
import { listQueues } from '../../store/queue/queues.ts';
import { listRepos } from '../../store/tenancy/repos.ts';
import type { AppContext, Caller } from '../context.ts';
import type { Forge } from '../ports.ts';
import type { RepoRef } from '../repositories.ts';
import { repositoryHtmlUrl } from '../urls.ts';
import { queueStateOf } from './apply.ts';
import { flakeProtectionOf, runTestSummary } from './flake-judge.ts';
import { requiredStatusesForRead } from './forge-settings-cache.ts';
import { labelSettingsOf } from './label-settings.ts';
import { findQueueOf } from './queues.ts';
import { enqueuedPrRecord, queueConfigRecord } from './records.ts';

/**
 * getQueue, as the route keeps it (kept-answers.ts): the queue, the key naming everything its answer
 * depends on, and how to make the answer. Per request it reads the queue row (whose version every save
 * of the state bumps; the state itself comes from the cache of parsed states) and the flake protection
 * shown (the row's column, else what the branch's .mainline.yaml says, from the forge settings memo);
 * the answer itself, 1,000 PRs listed and shaped, is made only when the key changed.
 */
export async function queueRead(
  ctx: AppContext,
  caller: Caller,
  forge: Forge,
  body: { repo: RepoRef; targetBranch: string },
) {
  const { row, state, repoId } = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  // A display only: what the branch says may come from the memo (forge-settings-cache.ts).
  const flakeProtection = await flakeProtectionOf(
    {
      requiredStatuses: (repo, branch) => requiredStatusesForRead(ctx, forge, repo, branch, state.targetHead),
    },
    { ...body.repo, id: repoId },
    row,
    body.targetBranch,
  );
  const labels = labelSettingsOf(row);
  return {
    queueId: row.id,
    key: JSON.stringify([row.version, flakeProtection, labels]),
    make: () => ({
      ...queueConfigRecord(state),
      ...labels,
      flakeProtection,
      enqueuedPullRequests: listQueuedPrs(state).map(enqueuedPrRecord),
    }),
  };
}

/** getQueue's answer as a value (the dashboard's settings page). */
export async function getQueue(
  ctx: AppContext,
  caller: Caller,
  forge: Forge,
  body: { repo: RepoRef; targetBranch: string },
) {
  return (await queueRead(ctx, caller, forge, body)).make();
}

/** listPullRequests cursors are UUID-shaped (as upstream declares them) and carry the submission's sequence number. */
const cursorOf = (seq: number) => `00000000-0000-4000-8000-${seq.toString(16).padStart(12, '0')}`;
function seqOf(cursor: string): number {
  const m = /^00000000-0000-4000-8000-([0-9a-f]{12})$/i.exec(cursor);
  if (m?.[1] === undefined) {
    throw new AppError(
      'INVALID_PAGE_TOKEN',
      'cursor is not one this server returned; omit it to start from the first pull request',
    );
  }
  return Number.parseInt(m[1], 16);
}

export async function listPullRequests(
  ctx: AppContext,
  caller: Caller,
  body: {
    repo: RepoRef;
    targetBranch: string;
    state?: string | undefined;
    since?: string | undefined;
    cursor?: string | undefined;
    take?: number | undefined;
  },
) {
  const { state, row } = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  const take = body.take ?? 50;
  const after = body.cursor === undefined ? 0 : seqOf(body.cursor);
  const since = body.since === undefined ? Number.NEGATIVE_INFINITY : Date.parse(body.since);
  const matches = (e: PrEntry) =>
    e.seq > after && (body.state === undefined || e.state === body.state) && e.stateChangedAt >= since;
  // The page and whether another follows need the first take + 1 matches of live and archived
  // submissions together: archived ones are read in seq order, a batch at a time, until take + 1 of
  // them matched (a page of 50 reads 51 rows, not the whole archive).
  const archived: PrEntry[] = [];
  let from = after;
  for (let size = take + 1; ; size = Math.min(size * 4, ARCHIVE_BATCH)) {
    const batch = await archivedPrs(ctx.db, row.id, from, body.state, size);
    archived.push(...batch.filter(matches));
    const last = batch.at(-1);
    if (batch.length < size || last === undefined || archived.length > take) break;
    from = last.seq;
  }
  const matching = [...state.prs.values().filter(matches), ...archived].sort((a, b) => a.seq - b.seq);
  const page = matching.slice(0, take);
  const last = page.at(-1);
  return {
    pullRequests: page.map(enqueuedPrRecord),
    ...(matching.length > take && last !== undefined ? { nextCursor: cursorOf(last.seq) } : {}),
  };
}

/** The most archived submissions listPullRequests reads in one statement. */
const ARCHIVE_BATCH = 5_000;

/** A run taken out of the live state: its details from the archive, with the titles of the PRs it tested. */
async function archivedDetails(ctx: AppContext, queueId: string, state: QueueState, runId: string) {
  const run = await archivedRun(ctx.db, queueId, runId);
  if (run === undefined) return undefined;
  const prs = state.prs.copy();
  // The tested PRs no longer live, in one statement.
  const gone = run.tested.filter((n) => !prs.has(n));
  for (const [n, e] of gone.length === 0 ? [] : await archivedPrsByNumber(ctx.db, queueId, gone))
    prs.set(n, e);
  return getTestingDetails({ ...state, prs, runs: { ...state.runs, [runId]: run } }, runId);
}

const CHECK_STATE = { passed: 'SUCCESS', failed: 'FAILURE', pending: 'PENDING' } as const;

/** A check as Trunk's statusChecks state: a status reported as `error` is ERROR, not FAILURE. */
function checkState(c: CheckResult): 'ERROR' | (typeof CHECK_STATE)[keyof typeof CHECK_STATE] {
  return c.errored === true ? 'ERROR' : CHECK_STATE[c.outcome];
}

function prUrl(ctx: AppContext, caller: Caller, repo: RepoRef, n: number): string {
  if (repo.host.toLowerCase() === 'github.com')
    return `https://github.com/${repo.owner}/${repo.name}/pull/${n}`;
  const gitlab = ctx.config.gitlab;
  // A GitLab merge request links to GitLab's own page, as a GitHub pull request does.
  if (gitlab !== undefined && repo.host.toLowerCase() === gitlab.host.toLowerCase())
    return `${gitlab.url}/${repo.owner}/${repo.name}/-/merge_requests/${n}`;
  return `${repositoryHtmlUrl(ctx.config.publicUrl, caller.orgSlug, repo)}/pulls/${n}`;
}

/** getMergeQueueTestingDetails: every field of the spec's record; another queue's run is a 404 too. */
export async function testingDetails(
  ctx: AppContext,
  caller: Caller,
  body: { repo: RepoRef; targetBranch: string; testRunId: string },
) {
  const { state, row } = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  const d =
    getTestingDetails(state, body.testRunId) ?? (await archivedDetails(ctx, row.id, state, body.testRunId));
  if (d === undefined) {
    throw new AppError(
      'TEST_RUN_NOT_FOUND',
      `No test run ${body.testRunId} in the merge queue of branch "${body.targetBranch}"`,
    );
  }
  return {
    requiredStatuses: d.requiredStatuses,
    requiredStatusesSource: d.requiredStatusesSource,
    testBranch: d.testBranch,
    testBranchSha: d.testBranchSha ?? '',
    checkSuites: [],
    statusChecks: d.checks.map((c) => ({ context: c.name, url: c.url ?? '', state: checkState(c) })),
    testedPullRequests: d.testedPullRequests.map((p) => ({
      prNumber: p.prNumber,
      prUrl: prUrl(ctx, caller, body.repo, p.prNumber),
      title: p.title,
    })),
    createdAt: new Date(d.createdAt).toISOString(),
    status: d.status,
    ...(d.impactedTargets !== null ? { impactedTargets: d.impactedTargets } : {}),
    ...(d.impactedTargetsForTestedPrs !== null
      ? { impactedTargetsForTestedPrs: d.impactedTargetsForTestedPrs }
      : {}),
    dependentPrs: d.dependentPrs,
    ...(d.failureReason !== null ? { failureReason: d.failureReason } : {}),
    ...(await runTestSummary(ctx.db, ctx.caches.passBlobs, row.id, d.testRunId)),
  };
}

const promEscape = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function queueLines(repo: string, s: QueueState, archived: ReadonlyMap<string, number>): string[] {
  const l = (name: string, extra: string, value: number) =>
    `${name}{repo="${promEscape(repo)}",branch="${promEscape(s.branch)}"${extra}} ${value}`;
  const entries = s.prs.values();
  const count = (pred: (e: PrEntry) => boolean) => entries.filter(pred).length;
  const runs = Object.values(s.runs);
  return [
    l('mq_depth_current', ',queue_type="main"', s.order.length),
    l(
      'mq_depth_current',
      ',queue_type="bisection"',
      runs.filter((r) => r.kind === 'bisection' && (r.status === 'in_progress' || r.status === 'building'))
        .length,
    ),
    ...['pending', 'testing', 'tests_passed', 'pending_failure', 'not_ready'].map((st) =>
      l(
        'mq_prs_current',
        `,state="${st}"`,
        count((e) => e.state === st),
      ),
    ),
    ...TERMINAL.map((st) =>
      l('mq_prs_total', `,state="${st}"`, count((e) => e.state === st) + (archived.get(st) ?? 0)),
    ),
    l(
      'mq_test_runs_in_progress',
      '',
      runs.filter((r) => r.status === 'in_progress' || r.status === 'building').length,
    ),
  ];
}

/** getMergeQueueMetrics: Prometheus text for the caller's queues, optionally one repository's. */
export async function queueMetrics(
  ctx: AppContext,
  caller: Caller,
  query: { repo?: string | undefined; repoHost?: string | undefined },
) {
  if (query.repo !== undefined && query.repoHost === undefined) {
    throw new AppError(
      'VALIDATION_FAILED',
      'repoHost is required when repo is given (e.g. repo=acme/web&repoHost=github.com)',
      {
        details: [
          {
            path: '$query.repoHost',
            expected: 'the git host of repo',
            message: '$query.repoHost is required when repo is given',
          },
        ],
      },
    );
  }
  const repos = (await listRepos(ctx.db, caller.orgId, {}, 10_000)).filter(
    (r) =>
      query.repo === undefined ||
      (`${r.owner_key}/${r.name_key}` === query.repo.toLowerCase() &&
        r.host_key === query.repoHost?.toLowerCase()),
  );
  const names = new Map(repos.map((r) => [r.id, `${r.owner}/${r.name}`]));
  const samples: string[] = [];
  const queues = await listQueues(ctx.db, [...names.keys()]);
  // Every queue's archived counts in one statement, not one per queue.
  const counts = await archivedPrCountsOf(
    ctx.db,
    queues.map((q) => q.id),
  );
  for (const q of queues) {
    samples.push(
      ...queueLines(names.get(q.repo_id) ?? '', await queueStateOf(ctx, q), counts.get(q.id) ?? new Map()),
    );
  }
  return (Object.entries(METRICS) as [string, string][])
    .flatMap(([name, help]) => [
      `# HELP ${name} ${help}`,
      `# TYPE ${name} gauge`,
      ...samples.filter((l) => l.startsWith(`${name}{`)),
    ])
    .join('\n')
    .concat('\n');
}

/** Every metric, grouped with its samples as the text format requires. */
const METRICS = {
  mq_depth_current: 'Pull requests in the queue (main) and bisection runs in flight (bisection).',
  mq_prs_current: 'Pull requests in the queue by state.',
  mq_prs_total: 'Pull requests that left the queue, by how.',
  mq_test_runs_in_progress: 'Test runs being built or tested.',
};
