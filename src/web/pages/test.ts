import { testPage } from '../../app/dashboard/tests.ts';
import { flagTest, type OverrideSetting, overrideQuarantine } from '../../app/health/manage.ts';
import { CSS_HREF, type Form, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { errorView } from '../views/simple.ts';
import { testView } from '../views/test.ts';
import type { RepoRequest } from './repos.ts';

const OVERRIDES = new Set<OverrideSetting>(['AUTO', 'ALWAYS_QUARANTINE', 'NEVER_QUARANTINE']);

/** `…/tests/{testId}`: a test (its html_url). */
export async function showTest(w: Web, r: RepoRequest<{ page: 'test'; testId: string }>) {
  const data = await testPage(w.ctx, r.s.caller, r.repo, r.route.testId);
  return sendPage(
    r.reply,
    200,
    testView(CSS_HREF, r.s.viewer, data, text(r.query['updated'], 20) || undefined),
  );
}

/** `POST …/tests/{testId}/quarantine` or `…/flag`: the API's use cases, then back to the test's page. */
export async function testAction(
  w: Web,
  r: RepoRequest<{ page: 'test-action'; testId: string; action: 'quarantine' | 'flag' }>,
  form: Form,
) {
  const { s, route } = r;
  const scope = { repo: r.repo, org_url_slug: s.caller.orgSlug, test_id: route.testId };
  const reason = text(form['reason'], 500) || undefined;
  if (route.action === 'quarantine') {
    const setting = form['setting'] as OverrideSetting;
    if (!OVERRIDES.has(setting)) {
      return sendPage(
        r.reply,
        400,
        errorView(
          { viewer: s.viewer, css: CSS_HREF },
          'Request refused',
          'Choose Auto, Always quarantine or Never quarantine.',
        ),
      );
    }
    await overrideQuarantine(w.ctx, s.caller, { ...scope, setting, reason });
  } else {
    await flagTest(w.ctx, s.caller, { ...scope, flagged: form['flagged'] === 'true', reason });
  }
  const base = (r.request.url.split('?')[0] ?? '').replace(/\/(quarantine|flag)$/, '');
  return r.reply.redirect(`${base}?updated=${route.action}`, 303);
}
