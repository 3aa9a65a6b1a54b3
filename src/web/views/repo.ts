import type { ListQuery, UnhealthyPage } from '../../app/dashboard/tests.ts';
import { badge, plural, time } from '../format.ts';
import { html } from '../html.ts';
import { paths } from '../paths.ts';
import { impactLine } from './durations.ts';
import { page, type Viewer } from './layout.ts';

const SHOWS = [
  { key: 'unhealthy', label: 'Unhealthy' },
  { key: 'flaky', label: 'Flaky' },
  { key: 'broken', label: 'Broken' },
  { key: 'quarantined', label: 'Quarantined' },
] as const;

const SORTS = [
  { key: 'prs', label: 'PRs impacted (7 days)' },
  { key: 'name', label: 'Name' },
  { key: 'changed', label: 'Status changed (newest first)' },
] as const;

/** The list's URL for a query; defaults are left out so links stay short. */
export function listHref(base: string, q: ListQuery, change: Partial<ListQuery> = {}): string {
  const next = { ...q, ...change };
  const params = new URLSearchParams();
  if (next.show !== 'unhealthy') params.set('show', next.show);
  if (next.search !== '') params.set('q', next.search);
  if (next.owner !== '') params.set('owner', next.owner);
  if (next.sort !== 'prs') params.set('sort', next.sort);
  if (next.page > 1) params.set('page', String(next.page));
  const s = params.toString();
  return s === '' ? base : `${base}?${s}`;
}

/** The repository page: unhealthy tests with filters, search, code-owner filter, sorting and pages. */
export function repoView(css: string, viewer: Viewer, data: UnhealthyPage, q: ListQuery): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const base = paths.repo(org, repo);
  const name = `${repo.host}/${repo.owner}/${repo.name}`;
  const count = {
    unhealthy: data.counts.flaky + data.counts.broken,
    flaky: data.counts.flaky,
    broken: data.counts.broken,
    quarantined: data.counts.quarantined,
  };
  const tabs = SHOWS.map(
    (s) =>
      html`<li><a href="${listHref(base, q, { show: s.key, page: 1 })}"${s.key === q.show ? html` aria-current="page"` : ''}>${s.label} (${count[s.key].toLocaleString('en-US')})</a></li>`,
  );
  const filters = html`<form class="filters" method="get" action="${base}" role="search" aria-label="Filter tests">
<input type="hidden" name="show" value="${q.show}">
<div><label for="f-q">Name contains</label><input type="search" id="f-q" name="q" value="${q.search}" maxlength="200"></div>
<div><label for="f-owner">Code owner</label><input type="text" id="f-owner" name="owner" value="${q.owner}" maxlength="200" placeholder="@team"></div>
<div><label for="f-sort">Sort by</label><select id="f-sort" name="sort">${SORTS.map(
    (s) => html`<option value="${s.key}"${s.key === q.sort ? html` selected` : ''}>${s.label}</option>`,
  )}</select></div>
<div><button type="submit">Apply</button> ${
    q.search !== '' || q.owner !== ''
      ? html`<a href="${listHref(base, q, { search: '', owner: '', page: 1 })}">Clear filters</a>`
      : ''
  }</div>
</form>`;
  const rows = data.rows.map((t) => {
    const owners = JSON.parse(t.codeowners) as string[];
    const where = [t.file, t.classname].filter((x) => x !== null && x !== '').join(' · ');
    return html`<tr>
<td data-label="Test"><a class="test-name" href="${paths.test(org, repo, t.id)}">${t.name}</a>${where !== '' ? html`<div class="hint mono">${where}</div>` : ''}${t.variant !== '' ? html`<div class="hint">variant ${t.variant}</div>` : ''}</td>
<td data-label="Status">${badge(t.status)}<div class="hint">${t.status_reason}</div></td>
<td class="num" data-label="PRs impacted (7 d)">${t.status === 'HEALTHY' ? 0 : t.prs_impacted_7d}</td>
<td data-label="Quarantined">${t.quarantined === 1 ? badge('quarantined') : html`<span class="muted">no</span>`}${t.quarantine_override !== 'AUTO' ? html`<div class="hint">override ${t.quarantine_override.replaceAll('_', ' ').toLowerCase()}</div>` : ''}</td>
<td data-label="Code owners">${owners.length === 0 ? html`<span class="muted">none</span>` : html`<ul class="chips">${owners.map((o) => html`<li><a href="${listHref(base, q, { owner: o, page: 1 })}" title="Show only tests owned by ${o}">${o}</a></li>`)}</ul>`}</td>
<td data-label="Status since">${time(t.status_at)}</td>
</tr>`;
  });
  const pager =
    data.pages > 1
      ? html`<nav class="pager" aria-label="Pages">
${data.page > 1 ? html`<a href="${listHref(base, q, { page: data.page - 1 })}" rel="prev">← Previous</a>` : html`<span class="muted">← Previous</span>`}
<span>Page ${data.page} of ${data.pages}</span>
${data.page < data.pages ? html`<a href="${listHref(base, q, { page: data.page + 1 })}" rel="next">Next →</a>` : html`<span class="muted">Next →</span>`}
</nav>`
      : '';
  const queues =
    data.queues.length === 0
      ? ''
      : html`<p>Merge queues: ${data.queues.map((b, i) => html`${i > 0 ? ', ' : ''}<a href="${paths.queue(org, repo, b)}">${b}</a>`)}</p>`;
  const shown = SHOWS.find((s) => s.key === q.show)?.label ?? 'Unhealthy';
  const body = html`<p><a href="${paths.failing(org, repo)}">Failing tests</a> <span class="hint">— every test that failed in the last 24 hours or 7 days, healthy or not</span></p>
<p><a href="${paths.allTests(org, repo)}">All tests</a> <span class="hint">— search every test by name, class, file or code owner</span> · <a href="${paths.durations(org, repo)}">Durations and CI time</a> · <a href="${paths.settings(org, repo)}">Settings and monitors</a></p>
${queues}
${impactLine(data.impact, paths.durations(org, repo))}
<nav aria-label="Which tests"><ul class="tabs">${tabs}</ul></nav>
${filters}
<p role="status">${plural(data.total, 'test')} ${q.search !== '' || q.owner !== '' ? 'match' : 'in this list'}.</p>
${
  data.rows.length === 0
    ? html`<p class="muted">No tests to show.</p>`
    : html`<div class="table-wrap"><table class="stack">
<caption class="visually-hidden">${shown} tests of ${name}, page ${data.page} of ${data.pages}</caption>
<thead><tr><th scope="col">Test</th><th scope="col">Status</th><th scope="col" class="num">PRs impacted (7 d)</th><th scope="col">Quarantined</th><th scope="col">Code owners</th><th scope="col">Status since</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${pager}`;
  return page(
    {
      title: `${shown} tests · ${name}`,
      viewer,
      css,
      crumbs: [{ label: org, href: paths.org(org) }, { label: name }],
    },
    body,
  );
}
