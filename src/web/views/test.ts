import type { TestPage } from '../../app/dashboard/tests.ts';
import type { TestCaseEventRow } from '../../store/tests/events.ts';
import { dailyOutcomeChart, durationLineChart } from '../charts.ts';
import { badge, rate, shortDay, shortSha, testDuration, time, utc } from '../format.ts';
import { externalLink, type Html, html } from '../html.ts';
import { paths } from '../paths.ts';
import { csrfField, page, type Viewer } from './layout.ts';

type EventData = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));

/** One history event in words. */
function describe(e: TestCaseEventRow): { what: Html; detail: string; by: string } {
  let d: EventData = {};
  try {
    d = JSON.parse(e.data) as EventData;
  } catch {
    d = {};
  }
  const by = str(d['by']);
  switch (e.kind) {
    case 'status':
      return {
        what: html`Status ${badge(str(d['from']))} → ${badge(str(d['to']))}`,
        detail: str(d['reason']),
        by,
      };
    case 'quarantine':
      return {
        what: html`${d['quarantined'] === true ? 'Quarantined' : 'Released from quarantine'}`,
        detail: str(d['reason']),
        by,
      };
    case 'quarantine_override':
      return {
        what: html`Quarantine override ${str(d['from']).replaceAll('_', ' ').toLowerCase()} → ${str(d['to']).replaceAll('_', ' ').toLowerCase()}`,
        detail: str(d['reason']),
        by,
      };
    case 'manual_flag':
      return {
        what: html`${d['flagged'] === true ? 'Flagged as flaky by hand' : 'Flaky flag removed'}`,
        detail: str(d['reason']),
        by,
      };
    case 'ticket':
      return { what: html`Ticket linked: ${externalLink(str(d['url']), str(d['ticket']))}`, detail: '', by };
    default:
      return { what: html`${e.kind}`, detail: '', by };
  }
}

const OVERRIDES = [
  { value: 'AUTO', label: 'Auto', hint: 'quarantined while flaky, as the repository’s settings say' },
  { value: 'ALWAYS_QUARANTINE', label: 'Always quarantine', hint: 'its failures never fail CI' },
  { value: 'NEVER_QUARANTINE', label: 'Never quarantine', hint: 'its failures always fail CI' },
] as const;

/** The test page: status and why, history, daily results, failure rates and failures, owners, controls. */
export function testView(css: string, viewer: Viewer, data: TestPage, updated: string | undefined): string {
  const org = viewer.orgSlug;
  const { repository: repo, test: t } = data;
  const name = `${repo.host}/${repo.owner}/${repo.name}`;
  const self = paths.test(org, repo, t.id);
  const owners = JSON.parse(t.codeowners) as string[];
  const flag = t.manual_flag === null ? null : (JSON.parse(t.manual_flag) as { flagged?: boolean });
  const flagged = flag?.flagged === true;
  const facts = html`<dl class="facts">
<dt>Status</dt><dd>${badge(t.status)} since ${time(t.status_at)}<div>${t.status_reason}</div></dd>
<dt>Quarantined</dt><dd>${t.quarantined === 1 ? html`${badge('quarantined')} ${t.quarantine_setting === 'ALWAYS_QUARANTINE' ? 'always (override)' : 'automatically'} since ${time(t.quarantined_at)}` : 'no'}${data.settings.quarantine.quarantiningEnabled ? '' : html` <span class="hint">(quarantining is off for this repository)</span>`}</dd>
<dt>Override</dt><dd>${t.quarantine_override.replaceAll('_', ' ').toLowerCase()}</dd>
<dt>Failure rate, 24 h</dt><dd>${rate(data.failureRate24h)}</dd>
<dt>Failure rate, 7 days</dt><dd>${rate(data.failureRate7d)}</dd>
<dt>PRs impacted, 7 days</dt><dd>${t.status === 'HEALTHY' ? 0 : t.prs_impacted_7d}</dd>
<dt>Code owners</dt><dd>${owners.length === 0 ? html`<span class="muted">none (no CODEOWNERS entry matched)</span>` : html`<ul class="chips">${owners.map((o) => html`<li><a href="${paths.repo(org, repo)}?owner=${encodeURIComponent(o)}">${o}</a></li>`)}</ul>`}</dd>
<dt>Ticket</dt><dd>${t.ticket_url !== null ? externalLink(t.ticket_url, t.ticket_id ?? t.ticket_url) : html`<span class="muted">none</span>`}</dd>
<dt>File</dt><dd class="mono">${t.file ?? '—'}</dd>
<dt>Class</dt><dd class="mono">${t.classname ?? '—'}</dd>
<dt>Suite</dt><dd class="mono">${t.parent ?? '—'}</dd>
${t.variant !== '' ? html`<dt>Variant</dt><dd>${t.variant}</dd>` : ''}
<dt>Test id</dt><dd class="mono">${t.id}</dd>
<dt>Seen</dt><dd>first ${time(t.first_seen_at)}, last ${time(t.last_seen_at)}</dd>
</dl>`;

  const chartDays = data.daily.map((d) => ({
    label: shortDay(d.start),
    passed: d.passed,
    failed: d.failed,
    quarantined: d.quarantined,
  }));
  const dataTable = html`<details><summary>Daily figures as a table</summary><div class="table-wrap"><table>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Passed</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Failed while quarantined</th><th scope="col" class="num">Skipped</th></tr></thead>
<tbody>${data.daily.map((d) => html`<tr><th scope="row">${utc(d.start).slice(0, 10)}</th><td class="num">${d.passed}</td><td class="num">${d.failed}</td><td class="num">${d.quarantined}</td><td class="num">${d.skipped}</td></tr>`)}</tbody>
</table></div></details>`;

  const timed = data.durations.filter((d) => d.meanMs !== null);
  const durationSlots = data.durations.map((d) => shortDay(d.start));
  const durationTrend =
    timed.length === 0
      ? html`<p class="muted">No attempt reported a duration in the last ${data.durations.length} days.</p>`
      : durationLineChart(
          'duration-chart',
          durationSlots,
          [{ label: 'Mean duration', cls: 'p50', values: data.durations.map((d) => d.meanMs) }],
          `Mean duration of the test's timed attempts per day, last ${data.durations.length} days from ${durationSlots[0] ?? ''} (UTC): ${data.durations.map((d) => (d.meanMs === null ? 'none' : testDuration(d.meanMs))).join(', ')}.`,
          testDuration,
          5,
        );

  const failures =
    data.failures.length === 0
      ? html`<p class="muted">No failures in the last 30 days.</p>`
      : data.failures.map(
          (g) => html`<details>
<summary>${g.summary === '' ? '(no message)' : g.summary} — ${g.occurrences}×, last ${utc(g.lastAt)}</summary>
${g.samples.map(
  (
    s,
  ) => html`<h3>${time(s.at)} · ${s.branch} @ <span class="mono">${shortSha(s.commit_sha)}</span>${s.pr_number !== null ? ` · PR #${s.pr_number}` : ''}${s.quarantined === 1 ? html` ${badge('quarantined')}` : ''}</h3>
<pre>${s.failure_text ?? s.failure_summary ?? '(no message)'}</pre>`,
)}
</details>`,
        );

  const history =
    data.history.length === 0
      ? html`<p class="muted">No changes yet: the test has been healthy since it was first seen.</p>`
      : html`<div class="table-wrap"><table>
<caption class="visually-hidden">History of the test, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Change</th><th scope="col">Why</th><th scope="col">By</th></tr></thead>
<tbody>${data.history.map((e) => {
          const x = describe(e);
          return html`<tr><td>${time(e.at)}</td><td>${x.what}</td><td>${x.detail}</td><td>${x.by}</td></tr>`;
        })}</tbody></table></div>`;

  const controls = html`<div class="controls">
<form method="post" action="${self}/quarantine" aria-labelledby="override-title">
<h3 id="override-title">Quarantine override</h3>
${csrfField(viewer)}
<fieldset><legend>Quarantine this test</legend>
${OVERRIDES.map(
  (o) =>
    html`<label><input type="radio" name="setting" value="${o.value}"${t.quarantine_override === o.value ? html` checked` : ''}> ${o.label} <span class="hint">— ${o.hint}</span></label>`,
)}
</fieldset>
<div class="field"><label for="override-reason">Reason (kept in the history)</label><input type="text" id="override-reason" name="reason" maxlength="500"></div>
<button type="submit">Save override</button>
</form>
<form method="post" action="${self}/flag" aria-labelledby="flag-title">
<h3 id="flag-title">Flag as flaky</h3>
${csrfField(viewer)}
<p class="hint">${flagged ? 'This test is flagged as flaky by hand: it stays FLAKY until the flag is removed.' : 'Marks the test FLAKY now, whatever the monitors say, until the flag is removed.'}</p>
<input type="hidden" name="flagged" value="${flagged ? 'false' : 'true'}">
<div class="field"><label for="flag-reason">Reason (kept in the history)</label><input type="text" id="flag-reason" name="reason" maxlength="500"></div>
<button type="submit">${flagged ? 'Remove the flaky flag' : 'Flag as flaky'}</button>
</form>
</div>`;

  const notice =
    updated === 'quarantine'
      ? html`<p class="notice" role="status">The quarantine override was saved.</p>`
      : updated === 'flag'
        ? html`<p class="notice" role="status">The flaky flag was changed.</p>`
        : '';

  return page(
    {
      title: t.name,
      viewer,
      css,
      crumbs: [
        { label: org, href: paths.org(org) },
        { label: name, href: paths.repo(org, repo) },
        { label: 'Test' },
      ],
    },
    html`${notice}
${facts}
<h2 id="daily">Results per day (last ${data.daily.length} days, UTC)</h2>
${dailyOutcomeChart(chartDays, 'daily-chart')}
${dataTable}
<h2 id="durations">Duration per day (last ${data.durations.length} days, UTC)</h2>
${durationTrend}
<h2>Most common failures (30 days)</h2>
${failures}
<h2>History</h2>
${history}
<h2>Controls</h2>
${controls}`,
  );
}
