import { createHmac } from 'node:crypto';
import { type RepoPath, repositoryHtmlUrl, testHtmlUrl } from '../urls.ts';

/** What a delivery's body is made from. */
export interface DeliverySource {
  readonly event_id: string;
  readonly event_type: string;
  readonly payload: string;
  readonly created_at: number;
  readonly org_id: string;
  readonly org_slug: string;
}

function isRepoPath(value: unknown): value is RepoPath & Record<string, unknown> {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v['host'] === 'string' &&
    typeof v['owner'] === 'string' &&
    typeof v['name'] === 'string'
  );
}

/**
 * The event's data with this server's links: `repository.html_url` and `test.html_url`. They are
 * added when sending (the code that records an event does not know the public URL), so they follow
 * MAINLINE_PUBLIC_URL.
 */
function withLinks(data: Record<string, unknown>, publicUrl: string, orgSlug: string) {
  const repository = data['repository'];
  if (!isRepoPath(repository)) return data;
  const repo = { host: repository.host, owner: repository.owner, name: repository.name };
  const out: Record<string, unknown> = {
    ...data,
    repository: { ...repository, html_url: repositoryHtmlUrl(publicUrl, orgSlug, repo) },
  };
  const test = data['test'] as Record<string, unknown> | undefined;
  if (typeof test === 'object' && test !== null && typeof test['id'] === 'string') {
    const htmlUrl = testHtmlUrl(publicUrl, orgSlug, repo, test['id']);
    out['test'] = { ...test, html_url: htmlUrl };
    out['html_url'] = htmlUrl;
  }
  return out;
}

/** The JSON body POSTed for a delivery: `{id, type, created_at, organization, data}`. */
export function deliveryBody(d: DeliverySource, publicUrl: string): string {
  const data = JSON.parse(d.payload) as Record<string, unknown>;
  return JSON.stringify({
    id: d.event_id,
    type: d.event_type,
    created_at: new Date(d.created_at).toISOString(),
    organization: { id: d.org_id, slug: d.org_slug },
    data: withLinks(data, publicUrl, d.org_slug),
  });
}

/** The x-mainline-signature-256 header: `sha256=` + hex HMAC-SHA256 of the raw body with the endpoint's secret. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}
