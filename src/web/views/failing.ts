import type { FailingQuery, FailingTestsPage, FailingWindow } from '../../app/dashboard/failing.ts';
import { badge, plural, time } from '../format.ts';
import { html } from '../html.ts';
import { paths } from '../paths.ts';
import { page, type Viewer } from './layout.ts';

const WINDOWS: readonly { key: FailingWindow; label: string }[] = [
  { key: '24h', label: 'Last 24 hours' },
  { key: '7d', label: 'Last 7 days' },
];

/** The page's URL for a query; defaults (24 h, page 1) are left out. */
export function failingHref(base: string, q: FailingQuery, change: Partial<FailingQuery> = {}): string {
  const next = { ...q, ...change };
  const params = new URLSearchParams();
  if (next.window !== '24h') params.set('window', next.window);
  if (next.page > 1) params.set('page', String(next.page));
  const s = params.toString();
  return s === '' ? base : `${base}?${s}`;
}

/** Failing tests: every test that failed in the window, most failures first, whatever its status. */
export function failingView(css: string, viewer: Viewer, data: FailingTestsPage, q: FailingQuery): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const base = paths.failing(org, repo);
  const name = `${repo.host}/${repo.owner}/${repo.name}`;
  const windowLabel = WINDOWS.find((w) => w.key === q.window)?.label ?? '';
  const tabs = WINDOWS.map(
    (w) =>
      html`<li><a href="${failingHref(base, q, { window: w.key, page: 1 })}"${w.key === q.window ? html` aria-current="page"` : ''}>${w.label}</a></li>`,
  );
  const rows = data.rows.map(({ test: t, failures, lastAt, summary }) => {
    const where = [t.file, t.classname].filter((x) => x !== null && x !== '').join(' · ');
    return html`<tr>
<td data-label="Test"><a class="test-name" href="${paths.test(org, repo, t.id)}">${t.name}</a>${where !== '' ? html`<div class="hint mono">${where}</div>` : ''}${t.variant !== '' ? html`<div class="hint">variant ${t.variant}</div>` : ''}</td>
<td class="num" data-label="Failures">${failures.toLocaleString('en-US')}</td>
<td data-label="Last failure">${time(lastAt)}</td>
<td data-label="Latest failure">${summary === '' ? html`<span class="muted">no message</span>` : html`<span class="mono failure-summary">${summary}</span>`}</td>
<td data-label="Status">${badge(t.status)}${t.quarantined === 1 ? html` ${badge('quarantined')}` : ''}</td>
</tr>`;
  });
  const pager =
    data.pages > 1
      ? html`<nav class="pager" aria-label="Pages">
${data.page > 1 ? html`<a href="${failingHref(base, q, { page: data.page - 1 })}" rel="prev">← Previous</a>` : html`<span class="muted">← Previous</span>`}
<span>Page ${data.page} of ${data.pages}</span>
${data.page < data.pages ? html`<a href="${failingHref(base, q, { page: data.page + 1 })}" rel="next">Next →</a>` : html`<span class="muted">Next →</span>`}
</nav>`
      : '';
  const body = html`<p>Every test that failed in the window, healthy or not, most failures first (whole UTC hours, as <span class="mono">list-failing-tests</span> counts them). <a href="${paths.repo(org, repo)}">Unhealthy tests</a></p>
<nav aria-label="Window"><ul class="tabs">${tabs}</ul></nav>
<p role="status">${plural(data.total, 'test')} failed (${windowLabel.toLowerCase()}).</p>
${
  data.rows.length === 0
    ? html`<p class="muted">No test failed in this window.</p>`
    : html`<div class="table-wrap"><table class="stack">
<caption class="visually-hidden">Failing tests of ${name}, ${windowLabel.toLowerCase()}, page ${data.page} of ${data.pages}</caption>
<thead><tr><th scope="col">Test</th><th scope="col" class="num">Failures</th><th scope="col">Last failure</th><th scope="col">Latest failure</th><th scope="col">Status</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${pager}`;
  return page(
    {
      title: `Failing tests · ${name}`,
      viewer,
      css,
      crumbs: [
        { label: org, href: paths.org(org) },
        { label: name, href: paths.repo(org, repo) },
        { label: 'Failing tests' },
      ],
    },
    body,
  );
}
