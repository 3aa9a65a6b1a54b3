// Issue 28, second part, through the real HTTP stack: a repository's settings and monitors edited in
// the dashboard's form (the API's schema and use case: what the form saves is what the API answers;
// a refused value is shown beside its field with the API's message and changes nothing; another
// organization gets the 404 page; a post without the CSRF token is refused), and the all-tests list
// (search by name, classname or file; code owner; file; pages), linked from the repository page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { formOf, getPage, postForm, signIn } from '../support/dashboard.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { junitXml, upload } from '../support/upload.ts';

const BASE = '/acme/repos/github.com/acme/web';

describe('settings and monitors in the dashboard', () => {
  let t: TestApp;
  let token: string;
  let cookie: string;
  let otherCookie: string;

  const apiSettings = async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/flaky-tests/get-repository-settings',
      headers: { 'x-api-token': token },
      payload: { repo: REPO, org_url_slug: 'acme' },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().settings;
  };

  beforeAll(async () => {
    t = await buildTestApp();
    token = await t.token('acme');
    const other = await t.token('globex');
    const res = await upload(t, token, [{ name: 'r.xml', content: junitXml([{ name: 'test_a' }]) }]);
    expect(res.statusCode, res.body).toBe(200);
    cookie = await signIn(t, token);
    otherCookie = await signIn(t, other);
  });
  afterAll(() => t.close());

  it('shows the settings as the API has them, linked from the repository page', async () => {
    const repoPage = await getPage(t, BASE, cookie);
    expect(repoPage.body).toContain(`href="${BASE}/settings"`);
    const res = await getPage(t, `${BASE}/settings`, cookie);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Settings · github.com/acme/web</h1>');
    const api = await apiSettings();
    const form = formOf(res.body);
    expect(form['monitors.pass_on_retry.recovery_days']).toBe(
      String(api.monitors.pass_on_retry.recovery_days),
    );
    expect(form['monitors.failure_count.0.id']).toBe(api.monitors.failure_count[0].id);
    expect(form['monitors.failure_count.0.failure_count']).toBe(
      String(api.monitors.failure_count[0].failure_count),
    );
    expect(form['monitors.failure_count.0.branches']?.split('\n')).toEqual(
      api.monitors.failure_count[0].branches,
    );
    expect(form['_csrf']).toMatch(/.{20,}/);
    expect(res.body).not.toContain('<script');
  });

  it('saves a change made in the form, and the API then answers it', async () => {
    const before = await apiSettings();
    const form = formOf((await getPage(t, `${BASE}/settings`, cookie)).body);
    form['monitors.pass_on_retry.recovery_days'] = '9';
    form['monitors.failure_count.0.failure_count'] = '6';
    form['monitors.failure_count.0.branches'] = 'main\r\nrelease/*\r\n';
    form['ticket_url_template'] = 'https://issues.example/browse/{id}';
    delete form['auto_quarantine_flaky'];
    const res = await postForm(t, `${BASE}/settings`, cookie, form);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`${BASE}/settings?updated=settings`);
    const after = await apiSettings();
    expect(after.monitors.pass_on_retry.recovery_days).toBe(9);
    expect(after.monitors.failure_count[0]).toEqual({
      ...before.monitors.failure_count[0],
      failure_count: 6,
      branches: ['main', 'release/*'],
    });
    expect(after.ticket_url_template).toBe('https://issues.example/browse/{id}');
    expect(after.auto_quarantine_flaky).toBe(false);
    expect(after.quarantining_enabled).toBe(before.quarantining_enabled);
    expect(after.monitors.failure_rate).toEqual(before.monitors.failure_rate);
    const shown = await getPage(t, `${BASE}/settings?updated=settings`, cookie);
    expect(shown.body).toContain('Settings saved.');
    expect(formOf(shown.body)['monitors.pass_on_retry.recovery_days']).toBe('9');
  });

  it('refuses a bad value with the API message beside its field, and changes nothing', async () => {
    const before = await apiSettings();
    const form = formOf((await getPage(t, `${BASE}/settings`, cookie)).body);
    form['monitors.pass_on_retry.recovery_days'] = '99';
    form['monitors.failure_count.0.failure_count'] = '2';
    const res = await postForm(t, `${BASE}/settings`, cookie, form);
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(
      /id="s-monitors-pass_on_retry-recovery_days"[^>]*aria-invalid="true"[\s\S]{0,200}<p class="field-error"[^>]*>\$\.settings\.monitors\.pass_on_retry\.recovery_days must be a number &lt;= 15<\/p>/,
    );
    // What was typed stays in the form to be corrected.
    expect(formOf(res.body)['monitors.failure_count.0.failure_count']).toBe('2');
    expect(await apiSettings()).toEqual(before);

    // A rule of the policy (not of the schema): resolution shorter than the window.
    const form2 = formOf((await getPage(t, `${BASE}/settings`, cookie)).body);
    form2['monitors.failure_count.0.resolution_timeout_hours'] = '0.5';
    form2['monitors.failure_count.0.window_hours'] = '2';
    const res2 = await postForm(t, `${BASE}/settings`, cookie, form2);
    expect(res2.statusCode).toBe(400);
    expect(res2.body).toContain(
      '<p class="field-error" id="s-monitors-failure_count-0-resolution_timeout_hours-error">$.settings.monitors.failure_count[0].resolution_timeout_hours must be a number of hours at least as long as the window</p>',
    );
    // The same body through the API is refused with the same message.
    const api = await t.app.inject({
      method: 'POST',
      url: '/v1/flaky-tests/update-repository-settings',
      headers: { 'x-api-token': token },
      payload: {
        repo: REPO,
        org_url_slug: 'acme',
        settings: {
          monitors: {
            failure_count: [
              { ...before.monitors.failure_count[0], window_hours: 2, resolution_timeout_hours: 0.5 },
            ],
          },
        },
      },
    });
    expect(api.statusCode).toBe(400);
    expect(api.json().error.message).toContain(
      '$.settings.monitors.failure_count[0].resolution_timeout_hours must be a number of hours at least as long as the window',
    );
    expect(await apiSettings()).toEqual(before);
  });

  it('refuses a form shown before the monitors changed, rather than editing other monitors', async () => {
    const before = await apiSettings();
    const form = formOf((await getPage(t, `${BASE}/settings`, cookie)).body);
    form['monitors.failure_count.0.id'] = 'removed-meanwhile';
    const res = await postForm(t, `${BASE}/settings`, cookie, form);
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('The monitors changed since this form was shown');
    expect(await apiSettings()).toEqual(before);
  });

  it("gives another organization's session the 404 page, for the form and its post", async () => {
    const before = await apiSettings();
    const page = await getPage(t, `${BASE}/settings`, otherCookie);
    expect(page.statusCode).toBe(404);
    const unknown = await getPage(t, '/globex/repos/github.com/acme/nope/settings', otherCookie);
    expect(page.body).toBe(unknown.body);
    const otherCsrf = formOf((await getPage(t, '/globex', otherCookie)).body)['_csrf'] ?? '';
    const form = formOf((await getPage(t, `${BASE}/settings`, cookie)).body);
    form['monitors.pass_on_retry.recovery_days'] = '3';
    const res = await postForm(t, `${BASE}/settings`, otherCookie, { ...form, _csrf: otherCsrf });
    expect(res.statusCode).toBe(404);
    expect(await apiSettings()).toEqual(before);
  });

  it('refuses a post without the CSRF token (or with a wrong one), and changes nothing', async () => {
    const before = await apiSettings();
    const form = formOf((await getPage(t, `${BASE}/settings`, cookie)).body);
    form['monitors.pass_on_retry.recovery_days'] = '3';
    const { _csrf, ...without } = form;
    for (const body of [without, { ...form, _csrf: 'forged' }]) {
      const res = await postForm(t, `${BASE}/settings`, cookie, body);
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('Form refused');
    }
    // Without a session a post goes to the sign-in.
    const anonymous = await postForm(t, `${BASE}/settings`, '', {});
    expect(anonymous.statusCode).toBe(303);
    expect(await apiSettings()).toEqual(before);
  });
});

describe('the all-tests list', () => {
  let t: TestApp;
  let cookie: string;

  /** The test names of a page's table, in order. */
  const names = (body: string) =>
    [...body.matchAll(/<a class="test-name" href="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]);

  beforeAll(async () => {
    t = await buildTestApp();
    const token = await t.token('acme');
    const cases = [
      { name: 'test_login', classname: 'auth.LoginSpec', file: 'src/auth/login.test.ts', fail: 'boom' },
      { name: 'test_logout', classname: 'auth.LogoutSpec', file: 'src/auth/logout.test.ts' },
      { name: 'test_refund', classname: 'pay.RefundSpec', file: 'src/payments/refund.test.ts' },
      ...Array.from({ length: 52 }, (_, i) => ({
        name: `test_z${String(i).padStart(2, '0')}`,
        classname: 'misc.Spec',
        file: 'src/misc.test.ts',
      })),
    ];
    const res = await upload(t, token, [{ name: 'r.xml', content: junitXml(cases) }], {
      codeowners: '* @acme/web\n/src/payments/ @acme/payments\n',
    });
    expect(res.statusCode, res.body).toBe(200);
    cookie = await signIn(t, token);
  });
  afterAll(() => t.close());

  it('lists every test, healthy or not, by name, 50 a page, linked from the repository page', async () => {
    expect((await getPage(t, BASE, cookie)).body).toContain(`href="${BASE}/tests"`);
    const res = await getPage(t, `${BASE}/tests`, cookie);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>All tests · github.com/acme/web</h1>');
    expect(res.body).toContain('55 tests.');
    const first = names(res.body);
    expect(first).toHaveLength(50);
    expect(first.slice(0, 3)).toEqual(['test_login', 'test_logout', 'test_refund']);
    expect(res.body).toContain(`href="${BASE}/tests?page=2" rel="next"`);
    expect(names((await getPage(t, `${BASE}/tests?page=2`, cookie)).body)).toEqual([
      'test_z47',
      'test_z48',
      'test_z49',
      'test_z50',
      'test_z51',
    ]);
  });

  it('searches name, classname and file, and filters by code owner and file', async () => {
    const search = async (query: string) => names((await getPage(t, `${BASE}/tests?${query}`, cookie)).body);
    expect(await search('q=LOGOUT')).toEqual(['test_logout']);
    expect(await search('q=auth.LoginSpec')).toEqual(['test_login']);
    expect(await search('q=payments%2Frefund')).toEqual(['test_refund']);
    expect(await search(`owner=${encodeURIComponent('@acme/payments')}`)).toEqual(['test_refund']);
    expect(await search('file=src%2Fauth&q=test_log')).toEqual(['test_login', 'test_logout']);
    // LIKE wildcards in the search are taken literally.
    expect(await search('q=%25')).toEqual([]);
    const res = await getPage(t, `${BASE}/tests?q=test_log`, cookie);
    expect(res.body).toContain('2 tests match.');
  });

  it('is the 404 page for another organization', async () => {
    const other = await signIn(t, await t.token('globex'));
    expect((await getPage(t, `${BASE}/tests`, other)).statusCode).toBe(404);
  });
});

describe('merge-queue settings in the dashboard', () => {
  let s: GitScenario;
  let cookie: string;
  const page = `${BASE}/queues/main/settings`;
  const apiQueue = async () => {
    const res = await s.t.post('/v1/getQueue', { repo: REPO, targetBranch: 'main' }, s.token);
    expect(res.statusCode, res.body).toBe(200);
    const { enqueuedPullRequests: _prs, ...config } = res.json();
    return config;
  };

  beforeAll(async () => {
    s = await GitScenario.create({ directMergeMode: 'off', concurrency: 2 });
    cookie = await signIn(s.t, s.token);
  });
  afterAll(() => s.close());

  it('changes the settings edited in the form through updateQueue, and the API then answers them', async () => {
    const queuePage = await getPage(s.t, `${BASE}/queues/main`, cookie);
    expect(queuePage.body).toContain(`href="${page}"`);
    const before = await apiQueue();
    const shown = await getPage(s.t, page, cookie);
    expect(shown.statusCode).toBe(200);
    const form = formOf(shown.body);
    expect(form['concurrency']).toBe('2');
    expect(form['mergeMethod']).toBe(before.mergeMethod);
    expect(form['requiredStatuses']).toBe('ci');
    form['concurrency'] = '4';
    form['requiredStatuses'] = 'ci\nlint';
    form['batch'] = 'on';
    form['mergeMethod'] = 'squash';
    const res = await postForm(s.t, page, cookie, form);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`${page}?updated=queue`);
    expect(await apiQueue()).toEqual({
      ...before,
      concurrency: 4,
      requiredStatuses: ['ci', 'lint'],
      batch: true,
      mergeMethod: 'squash',
    });
    expect((await getPage(s.t, `${page}?updated=queue`, cookie)).body).toContain('Queue settings saved.');
  });

  it('refuses a bad value with the API message beside its field, and changes nothing', async () => {
    const before = await apiQueue();
    const form = formOf((await getPage(s.t, page, cookie)).body);
    form['concurrency'] = '0';
    form['batchingMinSize'] = 'many';
    const res = await postForm(s.t, page, cookie, form);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(
      '<p class="field-error" id="q-concurrency-error">$.concurrency must be a number &gt;= 1</p>',
    );
    expect(res.body).toContain(
      '<p class="field-error" id="q-batchingMinSize-error">$.batchingMinSize must be an integer</p>',
    );
    expect(formOf(res.body)['batchingMinSize']).toBe('many');
    expect(await apiQueue()).toEqual(before);
  });

  it('refuses a post without the CSRF token, and gives another organization the 404 page', async () => {
    const before = await apiQueue();
    const form = formOf((await getPage(s.t, page, cookie)).body);
    form['concurrency'] = '7';
    const { _csrf, ...without } = form;
    expect((await postForm(s.t, page, cookie, without)).statusCode).toBe(403);
    const other = await signIn(s.t, await s.t.token('globex'));
    expect((await getPage(s.t, page, other)).statusCode).toBe(404);
    const otherCsrf = formOf((await getPage(s.t, '/globex', other)).body)['_csrf'] ?? '';
    expect((await postForm(s.t, page, other, { ...form, _csrf: otherCsrf })).statusCode).toBe(404);
    expect(await apiQueue()).toEqual(before);
  });
});
