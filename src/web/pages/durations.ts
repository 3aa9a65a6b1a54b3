import { durationsPage } from '../../app/dashboard/durations.ts';
import { CSS_HREF, pageNumber, sendPage } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { durationsView } from '../views/durations.ts';
import type { RepoRequest } from './repos.ts';

/** `…/durations`: the slowest tests, test time and what flaky tests cost, per day. */
export async function showDurations(w: Web, r: RepoRequest<{ page: 'durations' }>) {
  const data = await durationsPage(w.ctx, r.s.caller, r.repo, { page: pageNumber(r.query['page']) });
  return sendPage(r.reply, 200, durationsView(CSS_HREF, r.s.viewer, data));
}
