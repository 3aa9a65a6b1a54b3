import { type QueueForge, type QueuePage, settingEffect } from '../../app/dashboard/queues.ts';
import type { RepoRef } from '../../app/repositories.ts';
import type { PrEntry } from '../../domain/queue/index.ts';
import { badge, duration, needSeconds, shortSha, time } from '../format.ts';
import { type Html, html } from '../html.ts';
import { paths } from '../paths.ts';
import { type Crumb, page, type Viewer } from './layout.ts';
import { chartsSection } from './queue-charts.ts';

export const fullName = (r: RepoRef) => `${r.host}/${r.owner}/${r.name}`;

/** Seconds between reloads of the queue page. */
export const QUEUE_REFRESH_SECONDS = 15;

/**
 * Reloads the queue page every QUEUE_REFRESH_SECONDS while it is visible, keeping the scroll
 * position and which <details> are open (kept in sessionStorage for this path across the reload).
 * Allowed by the page's CSP through its hash; without scripts a <noscript> meta refresh reloads it.
 */
export const QUEUE_REFRESH_SCRIPT = `(()=>{const k="mainline-keep:"+location.pathname;const s=sessionStorage.getItem(k);if(s!==null){sessionStorage.removeItem(k);try{const v=JSON.parse(s);for(const id of v.open){const d=document.getElementById(id);if(d)d.open=true}scrollTo(0,v.y)}catch{}}setInterval(()=>{if(document.hidden)return;const open=[...document.querySelectorAll("details[id]")].filter(d=>d.open).map(d=>d.id);sessionStorage.setItem(k,JSON.stringify({y:scrollY,open}));location.reload()},${QUEUE_REFRESH_SECONDS * 1000})})();`;

export function queueCrumbs(org: string, repo: RepoRef, branch: string, last?: string): Crumb[] {
  const out: Crumb[] = [
    { label: org, href: paths.org(org) },
    { label: fullName(repo), href: paths.repo(org, repo) },
  ];
  if (last === undefined) out.push({ label: `queue ${branch}` });
  else out.push({ label: `queue ${branch}`, href: paths.queue(org, repo, branch) }, { label: last });
  return out;
}

/** A forge's name as the queue pages show it. */
export const FORGE_NAMES: Record<QueueForge, string> = {
  github: 'GitHub',
  gitlab: 'GitLab',
  git: 'plain git (the built-in forge)',
};

/** What a queue settings page says of a setting that does nothing on this forge. */
export const noEffectOn = (forge: QueueForge) =>
  `no effect on ${forge === 'git' ? 'plain git' : FORGE_NAMES[forge]}`;

export function value(v: unknown): Html {
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
  const row = ({ run, archived }: QueuePage['runs'][number]) =>
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

/**
 * A setting's value as it acts on this queue's forge: one the forge does not act on says so, and a
 * switched-on one that talks to the forge says how it shows there.
 */
function settingValue(key: string, v: unknown, forge: QueueForge): Html {
  const effect = settingEffect(forge, key);
  if (effect === null) {
    return html`<span class="muted">${noEffectOn(forge)}</span> <span class="hint">(set to ${value(v)})</span>`;
  }
  return v === true && effect.how !== undefined
    ? html`${value(v)} <span class="hint">(${effect.how})</span>`
    : value(v);
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
      html`<dt>${label}</dt><dd>${settingValue(key, (s as Record<string, unknown>)[key], data.forge)}</dd>`,
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
${chartsSection(data.charts, data.chartView, paths.queue(org, repo, branch))}
<details id="queue-settings"><summary>Settings and flake protection</summary>
<p><a href="${paths.queueSettings(org, repo, branch)}">Change the queue's settings</a></p>
<dl class="facts">
<dt>Forge</dt><dd>${FORGE_NAMES[data.forge]}</dd>
<dt>Flake protection</dt><dd>${data.flakeProtection ?? html`<span class="muted">unknown (the repository could not be read)</span>`}</dd>
${settings}
</dl>
</details>`,
  );
}
