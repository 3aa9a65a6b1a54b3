import { FAILING_WINDOWS, type FailingQuery, failingTestsPage } from '../../app/dashboard/failing.ts';
import { CSS_HREF, pageNumber, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { failingView } from '../views/failing.ts';
import type { RepoRequest } from './repos.ts';

/** `…/failing`: every test that failed in the last 24 hours or 7 days. */
export async function showFailing(w: Web, r: RepoRequest<{ page: 'failing' }>) {
  const window = text(r.query['window'], 10);
  const q: FailingQuery = {
    window: window in FAILING_WINDOWS ? (window as FailingQuery['window']) : '24h',
    page: pageNumber(r.query['page']),
  };
  const data = await failingTestsPage(w.ctx, r.s.caller, r.repo, q);
  return sendPage(r.reply, 200, failingView(CSS_HREF, r.s.viewer, data, q));
}
