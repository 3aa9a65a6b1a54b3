import { Type } from 'typebox';
import type { Repository } from '../../app/repositories.ts';
import { repositoryHtmlUrl } from '../../app/urls.ts';

/** A repository as Mainline's own repository endpoints return it. */
export const RepositoryRecord = Type.Object({
  id: Type.String({ format: 'uuid' }),
  host: Type.String(),
  owner: Type.String(),
  name: Type.String(),
  html_url: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});

export function repositoryRecord(publicUrl: string, orgSlug: string, r: Repository) {
  return {
    id: r.id,
    host: r.host,
    owner: r.owner,
    name: r.name,
    html_url: repositoryHtmlUrl(publicUrl, orgSlug, r),
    created_at: new Date(r.created_at).toISOString(),
  };
}
