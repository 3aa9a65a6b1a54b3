import { type ListQuery, unhealthyTestsPage } from '../../app/dashboard/tests.ts';
import { CSS_HREF, pageNumber, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { repoView } from '../views/repo.ts';
import type { RepoRequest } from './repos.ts';

const SHOWS = new Set(['unhealthy', 'flaky', 'broken', 'quarantined']);
const SORTS = new Set(['prs', 'name', 'changed']);

function listQuery(q: Record<string, unknown>): ListQuery {
  const show = text(q['show'], 20);
  const sort = text(q['sort'], 20);
  return {
    show: (SHOWS.has(show) ? show : 'unhealthy') as ListQuery['show'],
    search: text(q['q'], 200),
    owner: text(q['owner'], 200),
    sort: (SORTS.has(sort) ? sort : 'prs') as ListQuery['sort'],
    page: pageNumber(q['page']),
  };
}

/** The repository page: its unhealthy tests (its html_url). */
export async function showUnhealthy(w: Web, r: RepoRequest<{ page: 'repo' }>) {
  const q = listQuery(r.query);
  const data = await unhealthyTestsPage(w.ctx, r.s.caller, r.repo, q);
  return sendPage(r.reply, 200, repoView(CSS_HREF, r.s.viewer, data, q));
}
