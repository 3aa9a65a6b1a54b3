import type { SettingsRecord } from '../../app/health/settings-api.ts';
import type { Repository } from '../../app/repositories.ts';
import { type Html, html } from '../html.ts';
import { paths } from '../paths.ts';
import { type FormValues, type MonitorKind, newPrefix } from '../settings-form.ts';
import { fieldErrors } from './field-errors.ts';
import { csrfField, page, type Viewer } from './layout.ts';

export interface SettingsViewData {
  readonly repository: Repository;
  readonly settings: SettingsRecord;
  /** The fields' values: the saved ones, or the ones just posted when they were refused. */
  readonly values: FormValues;
  /** Messages by field name (settings-form.ts fieldOf); `''` holds those of no one field. */
  readonly errors: ReadonlyMap<string, readonly string[]>;
  /** What was just saved: the settings, or a new monitor. */
  readonly saved: false | 'settings' | 'monitor-added';
}

const fieldId = (name: string) => `s-${name.replaceAll('.', '-')}`;

/** The repository's quarantine switches and monitors as a form, each refused value's message beside its field. */
export function settingsView(css: string, viewer: Viewer, data: SettingsViewData): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const name = `${repo.host}/${repo.owner}/${repo.name}`;
  const v = data.values;
  const { errorOf, described } = fieldErrors(data.errors, fieldId);
  const checkbox = (field: string, label: string) =>
    html`<div class="field"><input type="checkbox" id="${fieldId(field)}" name="${field}" value="on"${v[field] === 'on' ? html` checked` : ''}${described(field)}> <label for="${fieldId(field)}">${label}</label>${errorOf(field)}</div>`;
  const input = (field: string, label: string, hint = '', mode = 'decimal') =>
    html`<div class="field"><label for="${fieldId(field)}">${label}</label><input type="text" inputmode="${mode}" id="${fieldId(field)}" name="${field}" value="${v[field] ?? ''}"${described(field)}>${hint !== '' ? html`<span class="hint">${hint}</span>` : ''}${errorOf(field)}</div>`;
  const branches = (field: string) =>
    html`<div class="field"><label for="${fieldId(field)}">Branches (one glob a line; * matches anything including /)</label><textarea id="${fieldId(field)}" name="${field}" rows="4"${described(field)}>${v[field] ?? ''}</textarea>${errorOf(field)}</div>`;
  const rate = data.settings.monitors.failure_rate.map((m, i) => {
    const p = `monitors.failure_rate.${i}`;
    return html`<fieldset><legend>Failure rate: ${m.name} <span class="hint mono">${m.id}</span> — marks ${m.detection_type.toUpperCase()}</legend>
<input type="hidden" name="${p}.id" value="${m.id}">
${checkbox(`${p}.enabled`, 'Enabled')}
${input(`${p}.activation_threshold`, 'Activation threshold (0–1)')}
${input(`${p}.resolution_threshold`, 'Resolution threshold (0–1)')}
${input(`${p}.window_hours`, 'Window (hours)')}
${input(`${p}.min_sample_size`, 'Minimum runs in the window')}
${input(`${p}.stale_timeout_hours`, 'Stale after (hours)', 'empty: never')}
${branches(`${p}.branches`)}
${checkbox(`${p}.remove`, `Remove this monitor when saving (${m.id})`)}
</fieldset>`;
  });
  const count = data.settings.monitors.failure_count.map((m, i) => {
    const p = `monitors.failure_count.${i}`;
    return html`<fieldset><legend>Failure count: ${m.name} <span class="hint mono">${m.id}</span> — marks ${m.detection_type.toUpperCase()}</legend>
<input type="hidden" name="${p}.id" value="${m.id}">
${checkbox(`${p}.enabled`, 'Enabled')}
${input(`${p}.failure_count`, 'Failures')}
${input(`${p}.window_hours`, 'Within (hours)')}
${input(`${p}.resolution_timeout_hours`, 'Resolves after (hours without a failure)')}
${branches(`${p}.branches`)}
${checkbox(`${p}.remove`, `Remove this monitor when saving (${m.id})`)}
</fieldset>`;
  });
  const detection = (field: string) =>
    html`<div class="field"><label for="${fieldId(field)}">Marks tests</label><select id="${fieldId(field)}" name="${field}"${described(field)}>${(
      [
        ['flaky', 'FLAKY'],
        ['broken', 'BROKEN'],
      ] as const
    ).map(
      ([value, label]) =>
        html`<option value="${value}"${v[field] === value ? html` selected` : ''}>${label}</option>`,
    )}</select>${errorOf(field)}</div>`;
  const addForm = (kind: MonitorKind, title: string, fields: Html) => {
    const p = newPrefix(kind);
    const open = [...data.errors.keys()].some((k) => k.startsWith(`${p}.`));
    return html`<details id="add-${kind.replace('_', '-')}"${open ? html` open` : ''}><summary>${title}</summary>
<form method="post" action="${paths.settings(org, repo)}" class="settings" novalidate>
${csrfField(viewer)}
<input type="hidden" name="_action" value="add_${kind}">
${errorOf(`${p}.`)}
${input(`${p}.id`, 'Id (letters, digits, _ . -; unique in the repository)', '', 'text')}
${input(`${p}.name`, 'Name', '', 'text')}
${detection(`${p}.detection_type`)}
${fields}
${branches(`${p}.branches`)}
<p><button type="submit">Add the monitor</button></p>
</form>
</details>`;
  };
  const adds = html`<h2>Add a monitor</h2>
<p>A new monitor is added to the settings above as the API's <span class="mono">update-repository-settings</span> would, with the same checks; every test is re-evaluated at once.</p>
${addForm(
  'failure_rate',
  'Add a failure-rate monitor',
  html`${input('new_rate.activation_threshold', 'Activation threshold (0–1)')}
${input('new_rate.resolution_threshold', 'Resolution threshold (0–1)')}
${input('new_rate.window_hours', 'Window (hours)')}
${input('new_rate.min_sample_size', 'Minimum runs in the window')}
${input('new_rate.stale_timeout_hours', 'Stale after (hours)', 'empty: never')}`,
)}
${addForm(
  'failure_count',
  'Add a failure-count monitor',
  html`${input('new_count.failure_count', 'Failures')}
${input('new_count.window_hours', 'Within (hours)')}
${input('new_count.resolution_timeout_hours', 'Resolves after (hours without a failure)')}`,
)}`;
  const general = data.errors.get('');
  const body = html`${data.saved === false ? '' : html`<p class="notice" role="status">${data.saved === 'monitor-added' ? 'Monitor added.' : 'Settings saved.'}</p>`}
${
  data.errors.size > 0
    ? html`<div class="error-summary" role="alert"><p>${[...data.errors.keys()].some((k) => k.startsWith('new_')) ? 'The monitor was not added' : 'The settings were not saved'}; correct the fields marked below.</p>${general !== undefined ? html`<ul>${general.map((m) => html`<li>${m}</li>`)}</ul>` : ''}</div>`
    : ''
}
<p>The same settings as the API's <span class="mono">get-repository-settings</span> and <span class="mono">update-repository-settings</span>, with the same checks; a change re-evaluates every test at once and its status changes are recorded with your token's name. Tick “Remove this monitor” and save to remove one; add one with the forms below the settings.</p>
<form method="post" action="${paths.settings(org, repo)}" class="settings" novalidate>
${csrfField(viewer)}
<fieldset><legend>Quarantine</legend>
${checkbox('quarantining_enabled', 'Quarantining enabled (failures of quarantined tests do not fail CI)')}
${checkbox('auto_quarantine_flaky', 'Quarantine flaky tests automatically')}
${input('ticket_url_template', 'Ticket URL template', 'must hold {id}; empty: none', 'url')}
</fieldset>
<fieldset><legend>Pass on retry — marks FLAKY</legend>
${checkbox('monitors.pass_on_retry.enabled', 'Enabled')}
${input('monitors.pass_on_retry.recovery_days', 'Recovers after (days, 1–15)')}
${branches('monitors.pass_on_retry.branches')}
</fieldset>
${rate}
${count}
<p><button type="submit">Save settings</button> <a href="${paths.settings(org, repo)}">Discard changes</a></p>
</form>
${adds}`;
  return page(
    {
      title: `Settings · ${name}`,
      viewer,
      css,
      crumbs: [
        { label: org, href: paths.org(org) },
        { label: name, href: paths.repo(org, repo) },
        { label: 'Settings' },
      ],
    },
    body,
  );
}
