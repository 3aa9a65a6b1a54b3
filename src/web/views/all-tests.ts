import type { AllTestsPage, AllTestsQuery } from '../../app/dashboard/all-tests.ts';
import { badge, plural, time } from '../format.ts';
import { html } from '../html.ts';
import { paths } from '../paths.ts';
import { page, type Viewer } from './layout.ts';

/** The list's URL for a query; empty filters and page 1 are left out. */
export function allTestsHref(base: string, q: AllTestsQuery, change: Partial<AllTestsQuery> = {}): string {
  const next = { ...q, ...change };
  const params = new URLSearchParams();
  if (next.search !== '') params.set('q', next.search);
  if (next.owner !== '') params.set('owner', next.owner);
  if (next.file !== '') params.set('file', next.file);
  if (next.page > 1) params.set('page', String(next.page));
  const s = params.toString();
  return s === '' ? base : `${base}?${s}`;
}

/** All tests of a repository, healthy or not, with search by name/classname/file, code owner and file. */
export function allTestsView(css: string, viewer: Viewer, data: AllTestsPage, q: AllTestsQuery): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const base = paths.allTests(org, repo);
  const name = `${repo.host}/${repo.owner}/${repo.name}`;
  const filtered = q.search !== '' || q.owner !== '' || q.file !== '';
  const filters = html`<form class="filters" method="get" action="${base}" role="search" aria-label="Search tests">
<div><label for="a-q">Name, class or file contains</label><input type="search" id="a-q" name="q" value="${q.search}" maxlength="200"></div>
<div><label for="a-owner">Code owner</label><input type="text" id="a-owner" name="owner" value="${q.owner}" maxlength="200" placeholder="@team"></div>
<div><label for="a-file">File contains</label><input type="text" id="a-file" name="file" value="${q.file}" maxlength="500"></div>
<div><button type="submit">Search</button> ${filtered ? html`<a href="${base}">Clear filters</a>` : ''}</div>
</form>`;
  const rows = data.rows.map((t) => {
    const owners = JSON.parse(t.codeowners) as string[];
    const where = [t.file, t.classname].filter((x) => x !== null && x !== '').join(' · ');
    return html`<tr>
<td data-label="Test" class="name-cell"><a class="test-name" href="${paths.test(org, repo, t.id)}">${t.name}</a>${where !== '' ? html`<div class="hint mono">${where}</div>` : ''}${t.variant !== '' ? html`<div class="hint">variant ${t.variant}</div>` : ''}</td>
<td data-label="Status" class="status-cell">${badge(t.status)}${t.quarantined === 1 ? html` ${badge('quarantined')}` : ''}</td>
<td data-label="Code owners">${owners.length === 0 ? html`<span class="muted">none</span>` : html`<ul class="chips">${owners.map((o) => html`<li><a href="${allTestsHref(base, q, { owner: o, page: 1 })}" title="Show only tests owned by ${o}">${o}</a></li>`)}</ul>`}</td>
<td data-label="Last seen">${time(t.last_seen_at)}</td>
</tr>`;
  });
  const pager =
    data.pages > 1
      ? html`<nav class="pager" aria-label="Pages">
${data.page > 1 ? html`<a href="${allTestsHref(base, q, { page: data.page - 1 })}" rel="prev">← Previous</a>` : html`<span class="muted">← Previous</span>`}
<span>Page ${data.page} of ${data.pages}</span>
${data.page < data.pages ? html`<a href="${allTestsHref(base, q, { page: data.page + 1 })}" rel="next">Next →</a>` : html`<span class="muted">Next →</span>`}
</nav>`
      : '';
  const body = html`<p>Every test the repository's uploads have named, healthy or not, by name. <a href="${paths.repo(org, repo)}">Unhealthy tests</a> · <a href="${paths.failing(org, repo)}">Failing tests</a></p>
${filters}
<p role="status">${plural(data.total, 'test')}${filtered ? ' match' : ''}.</p>
${
  data.rows.length === 0
    ? html`<p class="muted">No tests to show.</p>`
    : html`<div class="table-wrap"><table class="stack">
<caption class="visually-hidden">All tests of ${name}, page ${data.page} of ${data.pages}</caption>
<thead><tr><th scope="col">Test</th><th scope="col">Status</th><th scope="col">Code owners</th><th scope="col">Last seen</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${pager}`;
  return page(
    {
      title: `All tests · ${name}`,
      viewer,
      css,
      crumbs: [
        { label: org, href: paths.org(org) },
        { label: name, href: paths.repo(org, repo) },
        { label: 'All tests' },
      ],
    },
    body,
  );
}
