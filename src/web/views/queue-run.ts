import type { PullPage, prPage, runPage } from '../../app/dashboard/queues.ts';
import type { RepoRef } from '../../app/repositories.ts';
import { badge, needSeconds, time } from '../format.ts';
import { externalLink, type Html, html } from '../html.ts';
import { paths } from '../paths.ts';
import { page, type Viewer } from './layout.ts';
import { fullName, queueCrumbs, value } from './queue.ts';

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
