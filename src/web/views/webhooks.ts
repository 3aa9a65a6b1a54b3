import type { WebhookRecord } from '../../app/webhooks-out/endpoints.ts';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.ts';
import { time } from '../format.ts';
import { type Html, html } from '../html.ts';
import { paths } from '../paths.ts';
import { csrfField, page, type Viewer } from './layout.ts';

export interface WebhooksViewData {
  readonly webhooks: readonly WebhookRecord[];
  /** The endpoint just created, with its secret: shown on this one answer only. */
  readonly created?: WebhookRecord & { secret: string };
  readonly deleted?: boolean;
  /** The create form as posted, when it was refused, and the API's messages. */
  readonly form?: Record<string, string | undefined>;
  readonly errors?: readonly string[];
}

/** The organization's outgoing webhooks: list, add (secret shown once), delete; the API's use cases. */
export function webhooksView(css: string, viewer: Viewer, data: WebhooksViewData): string {
  const org = viewer.orgSlug;
  const form = data.form ?? {};
  const checked = (t: string) => (data.form === undefined ? false : form[`event.${t}`] === 'on');
  const rows = data.webhooks.map(
    (w) => html`<tr>
<td data-label="URL" class="mono break">${w.url}</td>
<td data-label="Events">${w.events.join(', ')}</td>
<td data-label="Description">${w.description ?? ''}</td>
<td data-label="Created">${time(w.created_at)}</td>
<td data-label="State">${w.disabled ? 'disabled' : 'active'}</td>
<td data-label="Delete"><form method="post" action="${paths.deleteWebhook(org, w.id)}">${csrfField(viewer)}<button type="submit" aria-label="Delete the webhook to ${w.url}">Delete</button></form></td>
</tr>`,
  );
  const created: Html | '' =
    data.created === undefined
      ? ''
      : html`<div class="notice" role="status"><p>Webhook added. Its signing secret is shown this once; copy it now:</p>
<p><code class="secret">${data.created.secret}</code></p>
<p class="hint">Each delivery is signed with it (HMAC-SHA256).</p></div>`;
  const body = html`${created}${data.deleted === true ? html`<p class="notice" role="status">Webhook deleted.</p>` : ''}
<p>Signed JSON events POSTed to your URLs, as the API's <span class="mono">webhooks/create</span>, <span class="mono">webhooks/list</span> and <span class="mono">webhooks/delete</span> manage them, with the same checks.</p>
${
  rows.length === 0
    ? html`<p class="muted">No webhooks yet.</p>`
    : html`<div class="table-wrap"><table class="stack"><caption class="visually-hidden">Webhooks of ${org}</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Description</th><th scope="col">Created</th><th scope="col">State</th><th scope="col">Delete</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
<h2>Add a webhook</h2>
${
  data.errors === undefined
    ? ''
    : html`<div class="error-summary" role="alert"><p>The webhook was not added:</p><ul>${data.errors.map((m) => html`<li>${m}</li>`)}</ul></div>`
}
<form method="post" action="${paths.webhooks(org)}" class="settings" novalidate>
${csrfField(viewer)}
<div class="field"><label for="w-url">URL (http:// or https://)</label><input type="text" inputmode="url" id="w-url" name="url" value="${form['url'] ?? ''}"></div>
<fieldset><legend>Events</legend>
${WEBHOOK_EVENT_TYPES.map((t) => html`<div class="field"><input type="checkbox" id="w-${t}" name="event.${t}" value="on"${checked(t) ? html` checked` : ''}> <label for="w-${t}" class="mono">${t}</label></div>`)}
</fieldset>
<div class="field"><label for="w-description">Description (optional)</label><input type="text" id="w-description" name="description" value="${form['description'] ?? ''}"></div>
<p><button type="submit">Add the webhook</button></p>
</form>`;
  return page(
    { title: 'Webhooks', viewer, css, crumbs: [{ label: org, href: paths.org(org) }, { label: 'Webhooks' }] },
    body,
  );
}
