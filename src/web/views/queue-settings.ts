import { type QueueForge, settingEffect } from '../../app/dashboard/queues.ts';
import type { Repository } from '../../app/repositories.ts';
import { html } from '../html.ts';
import { paths } from '../paths.ts';
import { QUEUE_CHOICES } from '../queue-settings-form.ts';
import type { FormValues } from '../settings-form.ts';
import { fieldErrors } from './field-errors.ts';
import { csrfField, page, type Viewer } from './layout.ts';
import { noEffectOn } from './queue.ts';

export interface QueueSettingsViewData {
  readonly repository: Repository;
  readonly branch: string;
  /** The forge the queue acts on: settings it does not act on are marked. */
  readonly forge: QueueForge;
  readonly values: FormValues;
  /** Messages by field name; `''` holds those of no one field. */
  readonly errors: ReadonlyMap<string, readonly string[]>;
  readonly saved: boolean;
}

const fieldId = (name: string) => `q-${name}`;

/** A merge queue's settings as a form (updateQueue), each refused value's message beside its field. */
export function queueSettingsView(css: string, viewer: Viewer, data: QueueSettingsViewData): string {
  const org = viewer.orgSlug;
  const repo = data.repository;
  const name = `${repo.host}/${repo.owner}/${repo.name}`;
  const v = data.values;
  const note = (field: string) =>
    settingEffect(data.forge, field) === null
      ? html`<span class="hint">${noEffectOn(data.forge)}</span>`
      : '';
  const { errorOf, described } = fieldErrors(data.errors, fieldId);
  const checkbox = (field: string, label: string) =>
    html`<div class="field"><input type="checkbox" id="${fieldId(field)}" name="${field}" value="on"${v[field] === 'on' ? html` checked` : ''}${described(field)}> <label for="${fieldId(field)}">${label}</label> ${note(field)}${errorOf(field)}</div>`;
  const input = (field: string, label: string, mode = 'numeric') =>
    html`<div class="field"><label for="${fieldId(field)}">${label}</label><input type="text" inputmode="${mode}" id="${fieldId(field)}" name="${field}" value="${v[field] ?? ''}"${described(field)}>${note(field)}${errorOf(field)}</div>`;
  const select = (field: keyof typeof QUEUE_CHOICES, label: string) =>
    v[field] === ''
      ? ''
      : html`<div class="field"><label for="${fieldId(field)}">${label}</label><select id="${fieldId(field)}" name="${field}"${described(field)}>${QUEUE_CHOICES[
          field
        ].map(
          (c) =>
            html`<option value="${c}"${c === v[field] ? html` selected` : ''}>${c.replaceAll('_', ' ')}</option>`,
        )}</select>${errorOf(field)}</div>`;
  const general = data.errors.get('');
  const action = paths.queueSettings(org, repo, data.branch);
  const body = html`${data.saved ? html`<p class="notice" role="status">Queue settings saved.</p>` : ''}
${
  data.errors.size > 0
    ? html`<div class="error-summary" role="alert"><p>The settings were not saved; correct the fields marked below.</p>${general !== undefined ? html`<ul>${general.map((m) => html`<li>${m}</li>`)}</ul>` : ''}</div>`
    : ''
}
<p>The settings of the API's <span class="mono">updateQueue</span>, with the same checks; only the fields you change are sent. Pausing or draining the queue is done through the API. <a href="${paths.queue(org, repo, data.branch)}">Back to the queue</a></p>
<form method="post" action="${action}" class="settings" novalidate>
${csrfField(viewer)}
<fieldset><legend>Testing</legend>
${select('mode', 'Mode')}
${input('concurrency', 'Concurrency (PRs tested at once)')}
${input('testingTimeoutMinutes', 'Testing timeout (minutes)')}
${input('pendingFailureDepth', 'Pending failure depth')}
${input('bisectionConcurrency', 'Bisection concurrency')}
${checkbox('canOptimisticallyMerge', 'Optimistic merge')}
${select('optimizationMode', 'Optimization')}
${select('flakeProtection', 'Flake protection')}
<div class="field"><label for="${fieldId('requiredStatuses')}">Required statuses (one a line; empty: the ones found on the forge)</label><textarea id="${fieldId('requiredStatuses')}" name="requiredStatuses" rows="4"${described('requiredStatuses')}>${v['requiredStatuses'] ?? ''}</textarea>${errorOf('requiredStatuses')}</div>
</fieldset>
<fieldset><legend>Batching</legend>
${checkbox('batch', 'Batching')}
${input('batchingMaxWaitTimeMinutes', 'Batching max wait (minutes)')}
${input('batchingMinSize', 'Batching min size')}
${input('batchingMaxSize', 'Batching max size (batches grow up to it while the queue is long; empty: min size)')}
</fieldset>
<fieldset><legend>Merging</legend>
${select('mergeMethod', 'Merge method')}
${select('directMergeMode', 'Direct merge')}
</fieldset>
<fieldset><legend>On the forge</legend>
${checkbox('commentsEnabled', 'Comments')}
${checkbox('commandsEnabled', 'Commands')}
${checkbox('statusCheckEnabled', 'Status check')}
${checkbox('createPrsForTestingBranches', 'Draft PRs for test branches')}
${checkbox('extensionEnabled', 'Labels extension')}
${checkbox('labelCommandsEnabled', 'Label commands')}
${checkbox('stateLabelsEnabled', 'State labels')}
${input('enqueueingLabel', 'Enqueueing label (empty: none)', 'text')}
</fieldset>
<p><button type="submit">Save queue settings</button> <a href="${action}">Discard changes</a></p>
</form>`;
  return page(
    {
      title: `Queue settings · ${data.branch}`,
      viewer,
      css,
      crumbs: [
        { label: org, href: paths.org(org) },
        { label: name, href: paths.repo(org, repo) },
        { label: `queue ${data.branch}`, href: paths.queue(org, repo, data.branch) },
        { label: 'Settings' },
      ],
    },
    body,
  );
}
