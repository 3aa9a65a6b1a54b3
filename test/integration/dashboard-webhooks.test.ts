// Issue 28: the organization's outgoing webhooks in the dashboard, through the API's schema and use
// cases (webhooks/create, list, delete): the secret shown on the creating answer only, refused values
// with the API's messages, CSRF-protected, another organization's webhook a 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { csrfOf, getPage, postForm, signIn } from '../support/dashboard.ts';

describe('webhooks in the dashboard', () => {
  let t: TestApp;
  let token: string;
  let cookie: string;
  let other: string;
  let otherCookie: string;

  const apiList = async (as = token) => {
    const res = await t.post('/v1/webhooks/list', {}, as);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().webhooks as { id: string; url: string; events: string[]; description: string | null }[];
  };

  beforeAll(async () => {
    t = await buildTestApp({ MAINLINE_WEBHOOK_ALLOW_PRIVATE: '1' });
    token = await t.token('acme');
    other = await t.token('globex');
    cookie = await signIn(t, token);
    otherCookie = await signIn(t, other);
  });
  afterAll(() => t.close());

  it('adds a webhook, shows its secret on that answer only, and the API lists it', async () => {
    const page = await getPage(t, '/acme/webhooks', cookie);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Webhooks</h1>');
    expect(page.body).toContain('No webhooks yet.');
    expect(page.body).toContain('href="/acme/webhooks"');
    const res = await postForm(t, '/acme/webhooks', cookie, {
      _csrf: csrfOf(page.body),
      url: 'http://127.0.0.1:9/hook',
      'event.test.quarantined': 'on',
      'event.pull_request.merged': 'on',
      description: 'chat <ops>',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const secret = res.body.match(/<code class="secret">(whsec_[\w-]+)<\/code>/)?.[1];
    expect(secret).toBeDefined();
    expect(res.body).toContain('chat &lt;ops&gt;');
    expect(await apiList()).toEqual([
      expect.objectContaining({
        url: 'http://127.0.0.1:9/hook',
        events: ['test.quarantined', 'pull_request.merged'],
        description: 'chat <ops>',
      }),
    ]);
    const again = await getPage(t, '/acme/webhooks', cookie);
    expect(again.body).toContain('http://127.0.0.1:9/hook');
    expect(again.body).not.toContain(secret ?? 'whsec_');
    expect(again.body).not.toContain('whsec_');
  });

  it('refuses what the API refuses, with its messages, and adds nothing', async () => {
    const csrf = csrfOf((await getPage(t, '/acme/webhooks', cookie)).body);
    const noEvents = await postForm(t, '/acme/webhooks', cookie, {
      _csrf: csrf,
      url: 'http://127.0.0.1:9/x',
    });
    expect(noEvents.statusCode).toBe(400);
    expect(noEvents.body).toContain('The webhook was not added');
    expect(noEvents.body).toContain('$.events must');
    expect(noEvents.body).toContain('value="http://127.0.0.1:9/x"');
    const badUrl = await postForm(t, '/acme/webhooks', cookie, {
      _csrf: csrf,
      url: 'ftp://example.com/x',
      'event.test.quarantined': 'on',
    });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.body).toContain('$.url must be an absolute http:// or https:// URL');
    expect(await apiList()).toHaveLength(1);
  });

  it('refuses a form without the CSRF token, and another organization’s webhook is a 404', async () => {
    const [hook] = await apiList();
    const forged = await postForm(t, '/acme/webhooks', cookie, {
      url: 'http://127.0.0.1:9/y',
      'event.test.quarantined': 'on',
    });
    expect(forged.statusCode).toBe(403);
    const csrfDelete = await postForm(t, `/acme/webhooks/${hook?.id}/delete`, cookie, { _csrf: 'wrong' });
    expect(csrfDelete.statusCode).toBe(403);
    // globex, with its own valid form token: its page, not acme's; acme's webhook id is unknown to it.
    const otherCsrf = csrfOf((await getPage(t, '/globex/webhooks', otherCookie)).body);
    expect((await getPage(t, '/acme/webhooks', otherCookie)).statusCode).toBe(404);
    const theirs = await postForm(t, `/globex/webhooks/${hook?.id}/delete`, otherCookie, {
      _csrf: otherCsrf,
    });
    expect(theirs.statusCode).toBe(404);
    const acmePath = await postForm(t, `/acme/webhooks/${hook?.id}/delete`, otherCookie, {
      _csrf: otherCsrf,
    });
    expect(acmePath.statusCode).toBe(404);
    expect(await apiList()).toHaveLength(1);
    expect(await apiList(other)).toHaveLength(0);
  });

  it('deletes a webhook, and the API no longer lists it', async () => {
    const [hook] = await apiList();
    const csrf = csrfOf((await getPage(t, '/acme/webhooks', cookie)).body);
    const res = await postForm(t, `/acme/webhooks/${hook?.id}/delete`, cookie, { _csrf: csrf });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/acme/webhooks?updated=deleted');
    expect(await apiList()).toEqual([]);
    expect((await getPage(t, '/acme/webhooks?updated=deleted', cookie)).body).toContain('Webhook deleted.');
  });

  it('is a page by its shape: other paths under /{org}/webhooks are the API’s 404', async () => {
    const res = await getPage(t, '/acme/webhooks/x', cookie);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('ROUTE_NOT_FOUND');
    const signedOut = await t.app.inject({ method: 'GET', url: '/acme/webhooks' });
    expect(signedOut.statusCode).toBe(303);
  });
});
