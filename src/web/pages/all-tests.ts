import { type AllTestsQuery, allTestsPage } from '../../app/dashboard/all-tests.ts';
import { CSS_HREF, pageNumber, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { allTestsView } from '../views/all-tests.ts';
import type { RepoRequest } from './repos.ts';

/** `…/tests`: every test, with search and filters. */
export async function showAllTests(w: Web, r: RepoRequest<{ page: 'tests' }>) {
  const q: AllTestsQuery = {
    search: text(r.query['q'], 200),
    owner: text(r.query['owner'], 200),
    file: text(r.query['file'], 500),
    page: pageNumber(r.query['page']),
  };
  const data = await allTestsPage(w.ctx, r.s.caller, r.repo, q);
  return sendPage(r.reply, 200, allTestsView(CSS_HREF, r.s.viewer, data, q));
}
