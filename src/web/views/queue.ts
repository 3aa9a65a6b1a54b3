import { CHART_HOURS } from '../../app/dashboard/queue-charts.ts';
import type { PullPage, prPage, QueuePage, runPage } from '../../app/dashboard/queues.ts';
import type { RepoRef } from '../../app/repositories.ts';
import type { PrEntry, TestRun } from '../../domain/queue/index.ts';
import { durationLineChart, stackedBarChart } from '../charts.ts';
import { badge, duration, needSeconds, plural, shortSha, time } from '../format.ts';
import { externalLink, type Html, html } from '../html.ts';
import { paths } from '../paths.ts';
import { type Crumb, page, type Viewer } from './layout.ts';

const fullName = (r: RepoRef) => `${r.host}/${r.owner}/${r.name}`;

/** Seconds between reloads of the queue page. */
export const QUEUE_REFRESH_SECONDS = 15;

/**
 * Reloads the queue page every QUEUE_REFRESH_SECONDS while it is visible, keeping the scroll
 * position and which <details> are open (kept in sessionStorage for this path across the reload).
 * Allowed by the page's CSP through its hash; without scripts a <noscript> meta refresh reloads it.
 */
export const QUEUE_REFRESH_SCRIPT = `(()=>{const k="mainline-keep:"+location.pathname;const s=sessionStorage.getItem(k);if(s!==null){sessionStorage.removeItem(k);try{const v=JSON.parse(s);for(const id of v.open){const d=document.getElementById(id);if(d)d.open=true}scrollTo(0,v.y)}catch{}}setInterval(()=>{if(document.hidden)return;const open=[...document.querySelectorAll("details[id]")].filter(d=>d.open).map(d=>d.id);sessionStorage.setItem(k,JSON.stringify({y:scrollY,open}));location.reload()},${QUEUE_REFRESH_SECONDS * 1000})})();`;

function queueCrumbs(org: string, repo: RepoRef, branch: string, last?: string): Crumb[] {
  const out: Crumb[] = [
    { label: org, href: paths.org(org) },
    { label: fullName(repo), href: paths.repo(org, repo) },
  ];
  if (last === undefined) out.push({ label: `queue ${branch}` });
  else out.push({ label: `queue ${branch}`, href: paths.queue(org, repo, branch) }, { label: last });
  return out;
}

/** Queue settings that only a GitHub queue acts on: the plain-git forge has no PR comments, commands, status checks or draft PRs. */
const GITHUB_ONLY = new Set([
  'createPrsForTestingBranches',
  'commentsEnabled',
  'commandsEnabled',
  'statusCheckEnabled',
]);

function value(v: unknown): Html {
  if (typeof v === 'boolean') return html`${v ? 'yes' : 'no'}`;
  if (Array.isArray(v)) return v.length === 0 ? html`<span class="muted">none</span>` : html`${v.join(', ')}`;
  return html`${v === null || v === undefined ? '—' : String(v)}`;
}

const SETTING_LABELS: Record<string, string> = {
  mode: 'Mode',
  concurrency: 'Concurrency',
  testingTimeoutMinutes: 'Testing timeout (minutes)',
  canOptimisticallyMerge: 'Optimistic merge',
  pendingFailureDepth: 'Pending failure depth',
  batch: 'Batching',
  batchingMaxWaitTimeMinutes: 'Batching max wait (minutes)',
  batchingMinSize: 'Batching min size',
  batchingMaxSize: 'Batching max size',
  createPrsForTestingBranches: 'Draft PRs for test branches',
  commentsEnabled: 'Comments',
  commandsEnabled: 'Commands',
  statusCheckEnabled: 'Status check',
  bisectionConcurrency: 'Bisection concurrency',
  requiredStatuses: 'Required statuses',
  directMergeMode: 'Direct merge',
  optimizationMode: 'Optimization',
  mergeMethod: 'Merge method',
};

function runsTable(
  org: string,
  repo: RepoRef,
  branch: string,
  runs: QueuePage['runs'],
  now: number,
  seconds: boolean,
): Html {
  if (runs.length === 0) return html`<p class="muted">No test runs yet.</p>`;
  const row = ({ run, archived }: { run: TestRun; archived: boolean }) =>
    html`<tr>
<td data-label="Run"><a class="mono run-id" href="${paths.run(org, repo, branch, run.id)}">${run.id}</a></td>
<td data-label="Status">${badge(run.status === 'building' ? 'in_progress' : run.status)}</td>
<td data-label="PRs tested">${run.tested.map((n, i) => html`${i > 0 ? ', ' : ''}<a href="${paths.pr(org, repo, branch, n)}">#${n}</a>`)}${run.kind === 'bisection' ? html` <span class="hint">(bisection)</span>` : ''}</td>
<td data-label="Started">${time(run.createdAt, seconds)} <span class="hint">(${duration(now - run.createdAt)} ago)</span></td>
<td data-label="Failure">${run.failure?.reason ?? ''}</td>
<td data-label="Where">${archived ? 'archived' : 'live'}</td>
</tr>`;
  return html`<div class="table-wrap"><table class="stack">
<caption class="visually-hidden">Recent test runs, newest first</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">PRs tested</th><th scope="col">Started</th><th scope="col">Failure</th><th scope="col">Where</th></tr></thead>
<tbody>${runs.map(row)}</tbody></table></div>`;
}

function queuedRows(
  org: string,
  repo: RepoRef,
  branch: string,
  prs: readonly PrEntry[],
  now: number,
  seconds: boolean,
) {
  return prs.map(
    (e, i) => html`<tr>
<td class="num" data-label="Position">${e.state === 'not_ready' ? '—' : i + 1}</td>
<td data-label="PR"><a href="${paths.pr(org, repo, branch, e.number)}">#${e.number}</a> ${e.title}</td>
<td data-label="State">${badge(e.state)}<div class="hint">${e.reason}</div></td>
<td data-label="In this state">${duration(now - e.stateChangedAt)} <span class="hint">since ${time(e.stateChangedAt, seconds)}</span></td>
<td data-label="Waiting">${duration(now - e.submittedAt)}</td>
<td data-label="Author">${e.author}</td>
<td data-label="Priority">${e.priorityName}</td>
</tr>`,
  );
}

function finishedRows(org: string, repo: RepoRef, branch: string, prs: readonly PrEntry[], seconds: boolean) {
  return prs.map(
    (e) => html`<tr>
<td data-label="PR"><a href="${paths.pr(org, repo, branch, e.number)}">#${e.number}</a> ${e.title}</td>
<td data-label="State">${badge(e.state)}<div class="hint">${e.reason}</div></td>
<td data-label="Finished">${time(e.stateChangedAt, seconds)}</td>
<td data-label="Time in queue">${duration(e.stateChangedAt - e.submittedAt)}</td>
<td data-label="Author">${e.author}</td>
<td data-label="Priority">${e.priorityName}</td>
</tr>`,
  );
}

const hourLabel = (ms: number) => `${String(new Date(ms).getUTCHours()).padStart(2, '0')}:00`;
const orNone = (v: number | null) => (v === null ? 'none' : duration(v));

/** Merged per hour, time in queue (p50/p95) and failures and flakes, hour by hour (UTC). */
function chartsSection(c: QueuePage['charts']): Html {
  const slots = c.hours.map(hourLabel);
  const from = `last ${CHART_HOURS} hours, hourly from ${slots[0] ?? ''} UTC`;
  const sum = (v: readonly number[]) => v.reduce((a, b) => a + b, 0);
  const merged = stackedBarChart(
    'chart-merged',
    slots,
    [{ label: 'Merged', cls: 'merged', values: c.merged }],
    `PRs merged per hour, ${from}: ${c.merged.join(', ')}; ${sum(c.merged)} in all.`,
  );
  const waits = durationLineChart(
    'chart-time-in-queue',
    slots,
    [
      { label: 'p50', cls: 'p50', values: c.p50 },
      { label: 'p95', cls: 'p95', values: c.p95 },
    ],
    `Time in queue of the PRs merged each hour, ${from}: p50 ${c.p50.map(orNone).join(', ')}; p95 ${c.p95.map(orNone).join(', ')}.`,
    duration,
  );
  const failures = stackedBarChart(
    'chart-failures',
    slots,
    [
      { label: 'Failed runs', cls: 'failed', values: c.failed },
      { label: 'Flaky failures (retried or ignored by flake protection)', cls: 'flaky', values: c.flaky },
    ],
    `Test runs that failed per hour, ${from}: ${c.failed.join(', ')}; flaky failures: ${c.flaky.join(', ')}.`,
  );
  return html`<section aria-labelledby="queue-charts">
<h2 id="queue-charts">Last ${CHART_HOURS} hours</h2>
<p class="hint">Hours in UTC, oldest to newest; the last is the current hour.${c.truncated ? ' Only the latest records were read: the figures are a lower bound.' : ''}</p>
<h3>Merged per hour</h3>
${merged}
<h3>Time in queue</h3>
<p>${
    c.overall.merged === 0
      ? html`<span class="muted">No PR merged in the last ${CHART_HOURS} hours.</span>`
      : html`From submission to merge, ${plural(c.overall.merged, 'PR')}: p50 <strong>${orNone(c.overall.p50)}</strong>, p95 <strong>${orNone(c.overall.p95)}</strong>.`
  }</p>
${waits}
<h3>Failures and flakes</h3>
<p>${sum(c.failed)} failed test runs, ${sum(c.flaky)} flaky failures.</p>
${failures}
</section>`;
}

/** A setting's value as it acts on this queue: GitHub-only settings do nothing on plain git. */
function settingValue(key: string, v: unknown, onGitHub: boolean): Html {
  if (!onGitHub && GITHUB_ONLY.has(key)) {
    return html`<span class="muted">no effect on plain git</span> <span class="hint">(set to ${value(v)})</span>`;
  }
  return value(v);
}

/**
 * A merge queue, leading with the queue: the PRs in it in order with their state and how long they
 * have been in it, the test runs (full ids), the PRs that left it, and last the settings (folded).
 */
export function queueView(css: string, viewer: Viewer, data: QueuePage, branch: string, now: number): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const s = data.settings;
  const seconds = needSeconds([
    ...data.queued.map((e) => e.stateChangedAt),
    ...data.finished.map((e) => e.stateChangedAt),
    ...data.runs.map((r) => r.run.createdAt),
  ]);
  const settings = Object.entries(SETTING_LABELS).map(
    ([key, label]) =>
      html`<dt>${label}</dt><dd>${settingValue(key, (s as Record<string, unknown>)[key], data.onGitHub)}</dd>`,
  );
  const head = html`<thead><tr><th scope="col" class="num">Position</th><th scope="col">PR</th><th scope="col">State</th><th scope="col">In this state</th><th scope="col">Waiting</th><th scope="col">Author</th><th scope="col">Priority</th></tr></thead>`;
  const finishedHead = html`<thead><tr><th scope="col">PR</th><th scope="col">State</th><th scope="col">Finished</th><th scope="col">Time in queue</th><th scope="col">Author</th><th scope="col">Priority</th></tr></thead>`;
  return page(
    {
      title: `Merge queue · ${branch}`,
      viewer,
      css,
      crumbs: queueCrumbs(org, repo, branch),
      script: QUEUE_REFRESH_SCRIPT,
      refreshWithoutScript: QUEUE_REFRESH_SECONDS,
    },
    html`<p>${badge(s.state)} Target <span class="mono">${s.branch} @ ${shortSha(data.targetHead)}</span> · <span class="hint">as of ${time(now, true)}; this page reloads every ${QUEUE_REFRESH_SECONDS} s</span> · <a href="${paths.queue(org, repo, branch)}">Reload now</a></p>
<h2>In the queue (${data.queued.length})</h2>
${
  data.queued.length === 0
    ? html`<p class="muted">The queue is empty.</p>`
    : html`<div class="table-wrap"><table class="stack"><caption class="visually-hidden">Pull requests in the queue, in queue order</caption>${head}<tbody>${queuedRows(org, repo, branch, data.queued, now, seconds)}</tbody></table></div>`
}
<h2>Test runs</h2>
${runsTable(org, repo, branch, data.runs, now, seconds)}
<h2>Recently finished</h2>
${
  data.finished.length === 0
    ? html`<p class="muted">No pull request has left the queue yet.</p>`
    : html`<div class="table-wrap"><table class="stack"><caption class="visually-hidden">Pull requests that left the queue, newest first</caption>${finishedHead}<tbody>${finishedRows(org, repo, branch, data.finished, seconds)}</tbody></table></div>`
}
${chartsSection(data.charts)}
<details id="queue-settings"><summary>Settings and flake protection</summary>
<p><a href="${paths.queueSettings(org, repo, branch)}">Change the queue's settings</a></p>
<dl class="facts">
<dt>Forge</dt><dd>${data.onGitHub ? 'GitHub' : 'plain git (the built-in forge)'}</dd>
<dt>Flake protection</dt><dd>${data.flakeProtection ?? html`<span class="muted">unknown (the repository could not be read)</span>`}</dd>
${settings}
</dl>
</details>`,
  );
}

type Judgement = {
  decision: string;
  reason: string;
  tests: { testId: string; name: string; quarantined: boolean; status: string }[];
};

const DECISIONS: Record<string, string> = {
  ignored_quarantined: 'Failure ignored: only quarantined tests failed',
  retried_flaky: 'Retried: only flaky tests failed',
  real_failure: 'Real failure: tests that are not flaky or quarantined failed',
  no_results: 'No test results were uploaded for the run',
};

function judgementBlock(org: string, repo: RepoRef, j: Judgement, heading: string): Html {
  const tone = j.decision === 'real_failure' ? 'bad' : j.decision === 'ignored_quarantined' ? 'good' : '';
  return html`<section class="callout ${tone}" aria-labelledby="flake-protection">
<h2 id="flake-protection">${heading}</h2>
<dl class="facts">
<dt>Decision</dt><dd>${badge(j.decision)} ${DECISIONS[j.decision] ?? ''}</dd>
<dt>Reason</dt><dd>${j.reason}</dd>
</dl>
${
  j.tests.length === 0
    ? ''
    : html`<div class="table-wrap"><table><caption>Failing tests judged</caption>
<thead><tr><th scope="col">Test</th><th scope="col">Status</th><th scope="col">Quarantined</th></tr></thead>
<tbody>${j.tests.map((t) => html`<tr><td><a href="${paths.test(org, repo, t.testId)}">${t.name}</a></td><td>${badge(t.status)}</td><td>${t.quarantined ? 'yes' : 'no'}</td></tr>`)}</tbody></table></div>`
}
</section>`;
}

/** A test run: every field getMergeQueueTestingDetails returns, each check linked to its URL. */
export function runView(
  css: string,
  viewer: Viewer,
  data: Awaited<ReturnType<typeof runPage>>,
  branch: string,
  runId: string,
): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const d = data.details;
  const checks =
    d.statusChecks.length === 0
      ? html`<p class="muted">No status reported yet.</p>`
      : html`<div class="table-wrap"><table><caption class="visually-hidden">Status checks of the test branch</caption>
<thead><tr><th scope="col">Check</th><th scope="col">State</th><th scope="col">Link</th></tr></thead>
<tbody>${d.statusChecks.map((c) => html`<tr><td>${c.context}</td><td>${badge(c.state)}</td><td>${c.url === '' ? html`<span class="muted">no link</span>` : externalLink(c.url, c.url)}</td></tr>`)}</tbody></table></div>`;
  const created = Date.parse(d.createdAt);
  // A PR merged before the run was created was in its base already (its test branch was built on
  // that base), so it is no dependency; one merged later was merged into the test branch by the run.
  const dependents = data.dependents.filter((p) => p.mergedAt === null || p.mergedAt > created);
  const seconds = needSeconds([created, ...dependents.map((p) => p.mergedAt)]);
  const dependsOn =
    dependents.length === 0
      ? html`<span class="muted">none</span>`
      : dependents.map(
          (p, i) =>
            html`${i > 0 ? ', ' : ''}<a href="${paths.pr(org, repo, branch, p.number)}">#${p.number}</a>${p.mergedAt !== null ? html` <span class="hint">(merged since, ${time(p.mergedAt, seconds)})</span>` : ''}`,
        );
  const tested = d.testedPullRequests.map(
    (p) =>
      html`<li><a href="${paths.pr(org, repo, branch, p.prNumber)}">#${p.prNumber} ${p.title}</a> <span class="hint">(${p.prUrl.startsWith('http') ? externalLink(p.prUrl, 'pull request') : p.prUrl})</span></li>`,
  );
  return page(
    {
      title: `Test run ${runId}`,
      viewer,
      css,
      crumbs: queueCrumbs(org, repo, branch, `run ${runId}`),
    },
    html`<dl class="facts">
<dt>Status</dt><dd>${badge(d.status)}</dd>
${d.failureReason !== undefined ? html`<dt>Failure reason</dt><dd>${d.failureReason}</dd>` : ''}
<dt>Created</dt><dd>${time(d.createdAt, seconds)}</dd>
<dt>Test branch</dt><dd class="mono">${d.testBranch}</dd>
<dt>Test branch commit</dt><dd class="mono">${d.testBranchSha === '' ? '—' : d.testBranchSha}</dd>
<dt>Required statuses</dt><dd>${value(d.requiredStatuses)} <span class="hint">(from ${d.requiredStatusesSource.replaceAll('_', ' ')})</span></dd>
<dt>Impacted targets</dt><dd>${value(d.impactedTargets ?? null)}</dd>
<dt>Impacted targets of the tested PRs</dt><dd>${value(d.impactedTargetsForTestedPrs ?? null)}</dd>
<dt>Depends on PRs</dt><dd>${dependsOn}</dd>
<dt>Check suites</dt><dd>${d.checkSuites.length === 0 ? html`<span class="muted">none</span>` : String(d.checkSuites.length)}</dd>
${
  d.testResults !== undefined
    ? html`<dt>Test results</dt><dd>${d.testResults.uploads} upload(s), ${d.testResults.testCases} tests, ${d.testResults.failures} failed</dd>`
    : html`<dt>Test results</dt><dd><span class="muted">none uploaded for this run</span></dd>`
}
</dl>
<h2>Pull requests tested</h2>
<ul>${tested}</ul>
<h2>Status checks</h2>
${checks}
${d.flakeProtection !== undefined ? judgementBlock(org, repo, d.flakeProtection, 'Flake protection') : ''}`,
  );
}

/** A PR's latest submission: getSubmittedPullRequest, with the state's reason and flake protection made explicit. */
export function prView(
  css: string,
  viewer: Viewer,
  data: Awaited<ReturnType<typeof prPage>>,
  branch: string,
): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const p = data.pr;
  const fp = p.flakeProtection;
  const despite =
    fp !== undefined &&
    fp.decision === 'ignored_quarantined' &&
    (p.state === 'merged' || p.state === 'tests_passed');
  const banner =
    fp === undefined
      ? ''
      : html`${
          despite
            ? html`<p class="callout good"><strong>${p.state === 'merged' ? 'Merged' : 'Passed'} despite a failed test.</strong> Flake protection judged the failure harmless: ${fp.reason}</p>`
            : ''
        }${judgementBlock(org, repo, fp, 'Flake protection judgement')}`;
  const r = p.readiness;
  const historySeconds = needSeconds(p.history.map((h) => h.at));
  return page(
    {
      title: `#${p.prNumber} ${p.prTitle}`,
      viewer,
      css,
      crumbs: queueCrumbs(org, repo, branch, `PR #${p.prNumber}`),
    },
    html`<dl class="facts">
<dt>State</dt><dd>${badge(p.state)} since ${time(p.stateChangedAt, historySeconds)}</dd>
<dt>Why</dt><dd><strong>${p.stateReason}</strong></dd>
<dt>Author</dt><dd>${p.prAuthor}</dd>
<dt>Head commit</dt><dd class="mono">${p.prSha}</dd>
<dt>Base branch</dt><dd class="mono">${p.prBaseBranch}</dd>
<dt>Priority</dt><dd>${p.priorityName} (${p.priorityValue})${p.skipTheLine ? ' · skips the line' : ''}</dd>
<dt>In the queue now</dt><dd>${p.isCurrentlySubmittedToQueue ? 'yes' : 'no'}</dd>
<dt>Force-enqueued</dt><dd>${p.forceEnqueued ? 'yes' : 'no'}</dd>
<dt>Readiness</dt><dd>impacted targets ${r.hasImpactedTargets ? 'set' : 'not set'}${r.requiresImpactedTargets ? ' (required in parallel mode)' : ''}; base branch ${r.doesBaseBranchMatch ? 'matches' : 'does not match'} the queue; mergeability ${r.gitHubMergeability.replaceAll('_', ' ')}</dd>
<dt>Submission</dt><dd class="mono">${p.id}</dd>
<dt>Pull request</dt><dd><a href="${paths.pull(org, repo, p.prNumber)}">#${p.prNumber} in ${fullName(repo)}</a></dd>
</dl>
${banner}
<h2>History</h2>
<div class="table-wrap"><table><caption class="visually-hidden">States of this submission, oldest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">State</th><th scope="col">Reason</th></tr></thead>
<tbody>${p.history.map((h) => html`<tr><td>${time(h.at, historySeconds)}</td><td>${badge(h.state)}</td><td>${h.reason}</td></tr>`)}</tbody>
</table></div>`,
  );
}

/** A pull request of the plain-git forge, with its submissions to the repository's queues. */
export function pullView(css: string, viewer: Viewer, data: PullPage): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const pr = data.pull;
  return page(
    {
      title: `Pull request #${data.number}${pr !== undefined ? ` ${pr.title}` : ''}`,
      viewer,
      css,
      crumbs: [
        { label: org, href: paths.org(org) },
        { label: fullName(repo), href: paths.repo(org, repo) },
        { label: `PR #${data.number}` },
      ],
    },
    html`${
      pr === undefined
        ? html`<p class="muted">This pull request is not registered with the built-in git forge.</p>`
        : html`<dl class="facts">
<dt>State</dt><dd>${badge(pr.state)}</dd>
<dt>Author</dt><dd>${pr.author}</dd>
<dt>Branches</dt><dd class="mono">${pr.head_branch} → ${pr.base_branch}</dd>
<dt>Opened</dt><dd>${time(pr.created_at)}</dd>
<dt>Updated</dt><dd>${time(pr.updated_at)}</dd>
</dl>`
    }
<h2>Merge queue submissions</h2>
${
  data.submissions.length === 0
    ? html`<p class="muted">Never submitted to a merge queue.</p>`
    : html`<ul>${data.submissions.map((s) => html`<li><a href="${paths.pr(org, repo, s.branch, data.number)}">queue ${s.branch}</a>: ${badge(s.entry.state)} — ${s.entry.reason}</li>`)}</ul>`
}`,
  );
}
