import { prPage, pullPage, queuePage, runPage } from '../../app/dashboard/queues.ts';
import { CSS_HREF, scriptCsp, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { QUEUE_REFRESH_SCRIPT, queueView } from '../views/queue.ts';
import { prView, pullView, runView } from '../views/queue-run.ts';
import type { RepoRequest } from './repos.ts';

/** The queue page's CSP: its own reload script, by hash, and no other. */
const QUEUE_CSP = scriptCsp(QUEUE_REFRESH_SCRIPT);

/** `…/queues/{branch}`: a merge queue, its charts over 24 hours, or 7 or 30 days (`?charts=`). */
export async function showQueue(w: Web, r: RepoRequest<{ page: 'queue'; branch: string }>) {
  const view = text(r.query['charts'], 5);
  const chartView = view === '7d' || view === '30d' ? view : '24h';
  const data = await queuePage(w.ctx, r.s.caller, w.forge, r.repo, r.route.branch, chartView);
  return sendPage(
    r.reply,
    200,
    queueView(CSS_HREF, r.s.viewer, data, r.route.branch, w.ctx.now()),
    QUEUE_CSP,
  );
}

/** `…/queues/{branch}/runs/{runId}`: a test run. */
export async function showRun(w: Web, r: RepoRequest<{ page: 'run'; branch: string; runId: string }>) {
  const data = await runPage(w.ctx, r.s.caller, r.repo, r.route.branch, r.route.runId);
  return sendPage(r.reply, 200, runView(CSS_HREF, r.s.viewer, data, r.route.branch, r.route.runId));
}

/** `…/queues/{branch}/prs/{number}`: a PR's latest submission. */
export async function showPr(w: Web, r: RepoRequest<{ page: 'pr'; branch: string; number: number }>) {
  const data = await prPage(w.ctx, r.s.caller, r.repo, r.route.branch, r.route.number);
  return sendPage(r.reply, 200, prView(CSS_HREF, r.s.viewer, data, r.route.branch));
}

/** `…/pulls/{number}`: a PR of the built-in git forge. */
export async function showPull(w: Web, r: RepoRequest<{ page: 'pull'; number: number }>) {
  const data = await pullPage(w.ctx, r.s.caller, r.repo, r.route.number);
  return sendPage(r.reply, 200, pullView(CSS_HREF, r.s.viewer, data));
}
