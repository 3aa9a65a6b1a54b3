import type { RepoOverview } from '../../app/dashboard/overview.ts';
import { miniBars, sparkline } from '../charts.ts';
import { badge, plural, shortDay, time } from '../format.ts';
import { html } from '../html.ts';
import { paths } from '../paths.ts';
import { page, type Viewer } from './layout.ts';

const fullName = (r: { host: string; owner: string; name: string }) => `${r.host}/${r.owner}/${r.name}`;

/** The organization's repositories: test health now and over 14 days, uploads per day, merge queues. */
export function overviewView(css: string, viewer: Viewer, repos: readonly RepoOverview[]): string {
  const org = viewer.orgSlug;
  const rows = repos.map((r) => {
    const name = fullName(r.repository);
    const labels = r.days.map((d) => shortDay(d.day));
    const uploads = r.days.map((d) => d.uploads);
    const queues = r.queues.map(
      (q) =>
        html`<li><a href="${paths.queue(org, r.repository, q.branch)}">${q.branch}</a> ${badge(q.state)} <span class="muted">${plural(q.depth, 'PR')}</span></li>`,
    );
    return html`<tr>
<th scope="row"><a class="test-name" href="${paths.repo(org, r.repository)}">${name}</a></th>
<td class="num" data-label="Tests tracked">${r.tests === null ? '—' : r.tests.toLocaleString('en-US')}</td>
<td data-label="Flaky"><span class="cell-chart"><span class="num">${r.now.flaky}</span>${sparkline(
      r.days.map((d) => d.flaky),
      `Flaky tests per day in ${name}`,
      'flaky',
    )}</span></td>
<td data-label="Broken"><span class="cell-chart"><span class="num">${r.now.broken}</span>${sparkline(
      r.days.map((d) => d.broken),
      `Broken tests per day in ${name}`,
      'broken',
    )}</span></td>
<td data-label="Quarantined"><span class="cell-chart"><span class="num">${r.now.quarantined}</span>${sparkline(
      r.days.map((d) => d.quarantined),
      `Quarantined tests per day in ${name}`,
      'quarantined',
    )}</span></td>
<td data-label="Uploads / day"><span class="cell-chart"><span class="num">${uploads.at(-1) ?? 0}</span>${miniBars(uploads, labels, `Uploads per day in ${name}`)}</span></td>
<td data-label="Last upload">${time(r.lastUploadAt)}</td>
<td data-label="Merge queues">${queues.length === 0 ? html`<span class="muted">none</span>` : html`<ul class="chips">${queues}</ul>`}</td>
</tr>`;
  });
  const body =
    repos.length === 0
      ? html`<p>No repositories yet. A repository appears with its first test-results upload, <code>createQueue</code>, or <code>POST /v1/repositories/create</code>.</p>`
      : html`<p class="hint">Counts are now; the lines show the last 14 days (UTC), oldest to newest. Uploads are test-result uploads (CI runs) per day; the number is today’s.</p>
<div class="table-wrap"><table class="stack">
<caption class="visually-hidden">Repositories of ${org}</caption>
<thead><tr><th scope="col">Repository</th><th scope="col" class="num">Tests tracked</th><th scope="col">Flaky</th><th scope="col">Broken</th><th scope="col">Quarantined</th><th scope="col">Uploads / day</th><th scope="col">Last upload</th><th scope="col">Merge queues</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
  return page({ title: 'Repositories', viewer, css, crumbs: [{ label: org }] }, body);
}
