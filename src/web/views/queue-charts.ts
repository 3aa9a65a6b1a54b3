import { CHART_HOURS } from '../../app/dashboard/queue-charts.ts';
import type { ChartView, QueuePage } from '../../app/dashboard/queues.ts';
import { type ChartSeries, durationLineChart, stackedBarChart } from '../charts.ts';
import { duration, plural, shortDay } from '../format.ts';
import { type Html, html } from '../html.ts';

const hourLabel = (ms: number) => `${String(new Date(ms).getUTCHours()).padStart(2, '0')}:00`;
const orNone = (v: number | null) => (v === null ? 'none' : duration(v));
const series = <V>(label: string, cls: string, values: readonly V[]): ChartSeries<V> => ({
  label,
  cls,
  values,
});

const CHART_VIEWS: readonly { key: ChartView; label: string; title: string }[] = [
  { key: '24h', label: '24 hours', title: `Last ${CHART_HOURS} hours` },
  { key: '7d', label: '7 days', title: 'Last 7 days' },
  { key: '30d', label: '30 days', title: 'Last 30 days' },
];

/**
 * Merged, time in queue (p50/p95) and failures and flakes: hour by hour over the last 24 hours, or
 * day by day over 7 or 30 days (UTC), with links between the views.
 */
export function chartsSection(c: QueuePage['charts'], view: ChartView, base: string): Html {
  const daily = view !== '24h';
  const slots = c.hours.map(daily ? shortDay : hourLabel);
  const current = CHART_VIEWS.find((v) => v.key === view) ?? (CHART_VIEWS[0] as (typeof CHART_VIEWS)[0]);
  const per = daily ? 'day' : 'hour';
  const every = daily ? (c.hours.length > 10 ? 5 : 1) : 3;
  const from = daily
    ? `${current.title.toLowerCase()}, daily from ${slots[0] ?? ''} (UTC)`
    : `last ${CHART_HOURS} hours, hourly from ${slots[0] ?? ''} UTC`;
  const tabs = CHART_VIEWS.map(
    (v) =>
      html`<li><a href="${v.key === '24h' ? base : `${base}?charts=${v.key}`}#queue-charts"${v.key === view ? html` aria-current="page"` : ''}>${v.label}</a></li>`,
  );
  const sum = (v: readonly number[]) => v.reduce((a, b) => a + b, 0);
  const merged = stackedBarChart(
    'chart-merged',
    slots,
    [series('Merged', 'merged', c.merged)],
    `PRs merged per ${per}, ${from}: ${c.merged.join(', ')}; ${sum(c.merged)} in all.`,
    every,
  );
  const waits = durationLineChart(
    'chart-time-in-queue',
    slots,
    [series('p50', 'p50', c.p50), series('p95', 'p95', c.p95)],
    `Time in queue of the PRs merged each ${per}, ${from}: p50 ${c.p50.map(orNone).join(', ')}; p95 ${c.p95.map(orNone).join(', ')}.`,
    duration,
    every,
  );
  const failures = stackedBarChart(
    'chart-failures',
    slots,
    [
      series('Failed runs', 'failed', c.failed),
      series('Flaky failures (retried or ignored by flake protection)', 'flaky', c.flaky),
    ],
    `Test runs that failed per ${per}, ${from}: ${c.failed.join(', ')}; flaky failures: ${c.flaky.join(', ')}.`,
    every,
  );
  const window = daily ? current.title.toLowerCase() : `last ${CHART_HOURS} hours`;
  return html`<section aria-labelledby="queue-charts">
<h2 id="queue-charts">${current.title}</h2>
<nav aria-label="Chart window"><ul class="tabs">${tabs}</ul></nav>
<p class="hint">${daily ? 'UTC days, oldest to newest; the last is today so far.' : 'Hours in UTC, oldest to newest; the last is the current hour.'}${c.truncated ? ' Only the latest records were read: the figures are a lower bound.' : ''}</p>
<h3>Merged per ${per}</h3>
${merged}
<h3>Time in queue</h3>
<p>${
    c.overall.merged === 0
      ? html`<span class="muted">No PR merged in the ${window}.</span>`
      : html`From submission to merge, ${plural(c.overall.merged, 'PR')}: p50 <strong>${orNone(c.overall.p50)}</strong>, p95 <strong>${orNone(c.overall.p95)}</strong>.`
  }</p>
${waits}
<h3>Failures and flakes</h3>
<p>${sum(c.failed)} failed test runs, ${sum(c.flaky)} flaky failures.</p>
${failures}
</section>`;
}
