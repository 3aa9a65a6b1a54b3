import type { RepoOverview } from '../../app/dashboard/overview.ts';
import { miniBars, sparkline } from '../charts.ts';
import { badge, duration, plural, shortDay, time } from '../format.ts';
import { type Html, html, join } from '../html.ts';
import { paths } from '../paths.ts';
import { page, type Viewer } from './layout.ts';

const fullName = (r: { host: string; owner: string; name: string }) => `${r.host}/${r.owner}/${r.name}`;

/** A repository's full name that may break after each "/" but never inside a segment. */
function breakableName(name: string): Html {
  return join(
    name.split('/').map((part, i, all) => (i < all.length - 1 ? html`${part}/` : html`${part}`)),
    html`<wbr>`,
  );
}

/** One figure of a card: a number with its label, optionally linked. */
function figure(label: string, value: number | string, href?: string, tone = ''): Html {
  const shown = typeof value === 'number' ? value.toLocaleString('en-US') : value;
  return html`<div class="figure${tone === '' ? '' : ` figure-${tone}`}"><dt>${label}</dt><dd>${
    href === undefined ? shown : html`<a href="${href}">${shown}</a>`
  }</dd></div>`;
}

function repoCard(org: string, r: RepoOverview): Html {
  const name = fullName(r.repository);
  const repoHref = paths.repo(org, r.repository);
  const labels = r.days.map((d) => shortDay(d.day));
  const uploads = r.days.map((d) => d.uploads);
  const unhealthy = r.now.flaky + r.now.broken;
  const trend = (label: string, tone: 'flaky' | 'broken' | 'quarantined', values: number[], now: number) =>
    html`<li><span class="trend-label">${label}</span>${sparkline(values, `${label} tests per day in ${name}`, tone)}<span class="num">${now}</span></li>`;
  const queues = r.queues.map(
    (q) =>
      html`<li><a href="${paths.queue(org, r.repository, q.branch)}" class="mono">${q.branch}</a> ${badge(q.state)} <span class="muted">${plural(q.depth, 'PR')} in the queue · ${q.merged24h} merged in 24 h</span></li>`,
  );
  return html`<li class="repo-card">
<h2 class="repo-name"><a href="${repoHref}">${breakableName(name)}</a></h2>
<div class="repo-body">
<dl class="figures">
${figure('Unhealthy', unhealthy, repoHref, unhealthy > 0 ? 'bad' : '')}
${figure('Flaky', r.now.flaky, `${repoHref}?show=flaky`)}
${figure('Broken', r.now.broken, `${repoHref}?show=broken`)}
${figure('Quarantined', r.now.quarantined, `${repoHref}?show=quarantined`)}
${figure('Failing in 24 h', r.failing24h, paths.failing(org, r.repository))}
${figure('Tests tracked', r.tests === null ? '—' : r.tests, paths.allTests(org, r.repository))}
${figure('Retried failures, 7 d', r.impact.retriedFailures, paths.durations(org, r.repository))}
${figure('CI time lost, 7 d', duration(r.impact.retriedMs), paths.durations(org, r.repository))}
${figure('Queue runs failed by flakes, 7 d', r.impact.flakyRuns)}
</dl>
<div><h3>Last 14 days</h3>
<ul class="trends">
${trend(
  'Flaky',
  'flaky',
  r.days.map((d) => d.flaky),
  r.now.flaky,
)}
${trend(
  'Broken',
  'broken',
  r.days.map((d) => d.broken),
  r.now.broken,
)}
${trend(
  'Quarantined',
  'quarantined',
  r.days.map((d) => d.quarantined),
  r.now.quarantined,
)}
<li><span class="trend-label">Uploads</span>${miniBars(uploads, labels, `Uploads per day in ${name}`)}<span class="num">${uploads.at(-1) ?? 0}</span></li>
</ul>
<p class="hint">Last upload ${time(r.lastUploadAt)}</p></div>
<div><h3>Merge queues</h3>
${queues.length === 0 ? html`<p class="muted">none</p>` : html`<ul class="queues">${queues}</ul>`}</div>
</div>
</li>`;
}

/** The organization's repositories: test health now and over 14 days, failing tests, uploads, merge queues. */
export function overviewView(css: string, viewer: Viewer, repos: readonly RepoOverview[]): string {
  const org = viewer.orgSlug;
  const body =
    repos.length === 0
      ? html`<p>No repositories yet. A repository appears with its first test-results upload, <code>createQueue</code>, or <code>POST /v1/repositories/create</code>.</p>`
      : html`<p class="hint">Counts are now. Each line shows the last 14 days (UTC), oldest to newest, scaled to its own highest value (named in the line's title); the number after it is today’s. Uploads are test-result uploads (CI runs) per day. Retried failures are failed attempts of tests that passed on a retry in the same upload, and CI time lost their durations; queue runs failed by flakes are merge-queue test runs flake protection judged flaky (7 days, UTC, today included).</p>
<ul class="repo-cards">${repos.map((r) => repoCard(org, r))}</ul>`;
  return page({ title: 'Repositories', viewer, css, crumbs: [{ label: org }] }, body);
}
