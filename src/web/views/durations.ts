import { DURATION_DAYS, type DurationsPage, type TimeDay } from '../../app/dashboard/durations.ts';
import { IMPACT_DAYS, type Impact } from '../../app/dashboard/impact.ts';
import { durationLineChart, stackedBarChart } from '../charts.ts';
import { duration, plural, shortDay, testDuration } from '../format.ts';
import { type Html, html } from '../html.ts';
import { paths } from '../paths.ts';
import { page, type Viewer } from './layout.ts';

/** The page's URL for a page number; page 1 is the bare path. */
const pageHref = (base: string, n: number) => (n > 1 ? `${base}?page=${n}` : base);

/**
 * Test time, failures that passed on a retry and the CI time lost to them, and merge-queue runs
 * failed by flaky tests, per day: charts with their figures in their accessible names.
 */
export function timeCharts(days: readonly TimeDay[], flakyRuns: readonly number[], idPrefix: string): Html {
  const slots = days.map((d) => shortDay(d.start));
  const from = `last ${days.length} days, daily from ${slots[0] ?? ''} (UTC)`;
  const testTime = durationLineChart(
    `${idPrefix}-test-time`,
    slots,
    [{ label: 'Test time', cls: 'p50', values: days.map((d) => (d.timed === 0 ? null : d.testMs)) }],
    `Summed duration of every timed test attempt per day, ${from}: ${days.map((d) => duration(d.testMs)).join(', ')}.`,
    duration,
    5,
  );
  const lost = durationLineChart(
    `${idPrefix}-time-lost`,
    slots,
    [
      {
        label: 'CI time lost',
        cls: 'p95',
        values: days.map((d) => (d.retriedFailures === 0 ? null : d.retriedMs)),
      },
    ],
    `CI time lost to failures that passed on a retry, per day, ${from}: ${days.map((d) => duration(d.retriedMs)).join(', ')}.`,
    duration,
    5,
  );
  const retried = stackedBarChart(
    `${idPrefix}-retried`,
    slots,
    [{ label: 'Failures that passed on a retry', cls: 'flaky', values: days.map((d) => d.retriedFailures) }],
    `Failed attempts of tests that passed on a retry in the same upload, per day, ${from}: ${days.map((d) => d.retriedFailures).join(', ')}.`,
    5,
  );
  const queueRuns = stackedBarChart(
    `${idPrefix}-flaky-runs`,
    slots,
    [{ label: 'Merge-queue runs failed by flaky tests', cls: 'flaky', values: flakyRuns }],
    `Merge-queue test runs that failed by flaky tests (flake protection retried them or let them through as quarantined), per day, ${from}: ${flakyRuns.join(', ')}.`,
    5,
  );
  return html`<h3>Test time per day</h3>${testTime}
<h3>Failures that passed on a retry</h3>${retried}
<h3>CI time lost to them</h3>${lost}
<h3>Merge-queue runs failed by flaky tests</h3>${queueRuns}`;
}

/** What flaky tests cost over the last IMPACT_DAYS days, in one line with a link to the per-day charts. */
export function impactLine(impact: Impact, href: string): Html {
  return html`<p class="impact">Last ${IMPACT_DAYS} days: ${plural(impact.retriedFailures, 'failure')} passed on a retry (<strong>${duration(impact.retriedMs)}</strong> of CI time lost) · ${plural(impact.flakyRuns, 'merge-queue run')} failed by flaky tests. <a href="${href}">Per day</a></p>`;
}

/** Durations: the slowest tests by recent mean, and the repository's test time per day. */
export function durationsView(css: string, viewer: Viewer, data: DurationsPage): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const base = paths.durations(org, repo);
  const name = `${repo.host}/${repo.owner}/${repo.name}`;
  const first = (data.page - 1) * 50;
  const rows = data.slowest.map(
    (t, i) => html`<tr>
<td class="num" data-label="Rank">${first + i + 1}</td>
<td data-label="Test"><a class="test-name" href="${paths.test(org, repo, t.testId)}">${t.name}</a>${t.classname !== null && t.classname !== '' ? html`<div class="hint mono">${t.classname}</div>` : ''}</td>
<td class="num" data-label="Mean duration">${testDuration(t.meanMs)}</td>
<td class="num" data-label="Timed attempts">${t.count.toLocaleString('en-US')}</td>
</tr>`,
  );
  const pager =
    data.page > 1 || data.hasNext
      ? html`<nav class="pager" aria-label="Pages">
${data.page > 1 ? html`<a href="${pageHref(base, data.page - 1)}" rel="prev">← Previous</a>` : html`<span class="muted">← Previous</span>`}
<span>Page ${data.page}</span>
${data.hasNext ? html`<a href="${pageHref(base, data.page + 1)}" rel="next">Next →</a>` : html`<span class="muted">Next →</span>`}
</nav>`
      : '';
  const total = data.days.reduce((a, d) => a + d.testMs, 0);
  const lost = data.days.reduce((a, d) => a + d.retriedMs, 0);
  const body = html`<p>Durations reported by the test results. <a href="${paths.repo(org, repo)}">Unhealthy tests</a> · <a href="${paths.allTests(org, repo)}">All tests</a></p>
<section aria-labelledby="slowest">
<h2 id="slowest">Slowest tests</h2>
<p class="hint">By the mean duration of a test's timed attempts in the week (from Monday 00:00 UTC) of its latest one and the week before; tests timed this week or last.</p>
${
  data.slowest.length === 0
    ? html`<p class="muted">No test reported a duration in the last two weeks.</p>`
    : html`<div class="table-wrap"><table class="stack">
<caption class="visually-hidden">Slowest tests of ${name}, page ${data.page}</caption>
<thead><tr><th scope="col" class="num">Rank</th><th scope="col">Test</th><th scope="col" class="num">Mean duration</th><th scope="col" class="num">Timed attempts</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${pager}
</section>
<section aria-labelledby="time-per-day">
<h2 id="time-per-day">Last ${DURATION_DAYS} days</h2>
<p>${duration(total)} of test time; ${duration(lost)} lost to ${plural(
    data.days.reduce((a, d) => a + d.retriedFailures, 0),
    'failure',
  )} that passed on a retry in the same upload; ${plural(
    data.flakyRuns.reduce((a, b) => a + b, 0),
    'merge-queue run',
  )} failed by flaky tests.</p>
${timeCharts(data.days, data.flakyRuns, 'chart')}
</section>`;
  return page(
    {
      title: `Durations · ${name}`,
      viewer,
      css,
      crumbs: [
        { label: org, href: paths.org(org) },
        { label: name, href: paths.repo(org, repo) },
        { label: 'Durations' },
      ],
    },
    body,
  );
}
