// Issue 28: monitors added and removed in the dashboard, through update-repository-settings' schema
// and use case (the API's checks and messages; every test re-evaluated, its status changes in its
// history as the API records them), CSRF-protected, for the session's organization only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { formsOf, getPage, postForm, signIn } from '../support/dashboard.ts';
import { junitXml, upload } from '../support/upload.ts';

const BASE = '/acme/repos/github.com/acme/web';

describe('monitors added and removed in the dashboard', () => {
  let t: TestApp;
  let token: string;
  let cookie: string;
  let brokenId: string;

  const apiSettings = async () => {
    const res = await t.post(
      '/v1/flaky-tests/get-repository-settings',
      { repo: REPO, org_url_slug: 'acme' },
      token,
    );
    expect(res.statusCode, res.body).toBe(200);
    return res.json().settings;
  };
  const forms = async () => formsOf((await getPage(t, `${BASE}/settings`, cookie)).body);

  beforeAll(async () => {
    t = await buildTestApp();
    token = await t.token('acme');
    // test_b fails 4 times on main within the hour: BROKEN by the default failure-count monitor.
    for (let i = 0; i < 4; i++) {
      const res = await upload(
        t,
        token,
        [{ name: 'r.xml', content: junitXml([{ name: 'test_b', fail: 'boom' }, { name: 'test_a' }]) }],
        { sha: `c${i}`, branch: 'main' },
      );
      expect(res.statusCode, res.body).toBe(200);
    }
    cookie = await signIn(t, token);
    const list = await t.post(
      '/v1/flaky-tests/list-unhealthy-tests',
      { repo: REPO, org_url_slug: 'acme', status: 'BROKEN', page_query: { page_size: 100 } },
      token,
    );
    expect(list.statusCode, list.body).toBe(200);
    const broken = list.json().tests.find((x: { name: string }) => x.name === 'test_b');
    expect(broken).toBeDefined();
    brokenId = broken.id;
  });
  afterAll(() => t.close());

  it('adds a failure-rate monitor, which the API then lists', async () => {
    const [, rate] = await forms();
    expect(rate?.['_action']).toBe('add_failure_rate');
    expect(rate?.['_csrf']).toMatch(/.{20,}/);
    const res = await postForm(t, `${BASE}/settings`, cookie, {
      ...rate,
      'new_rate.id': 'nightly-flaky',
      'new_rate.name': 'Nightly: 20% over a week',
      'new_rate.activation_threshold': '0.2',
      'new_rate.branches': 'main\nnightly/*',
    });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`${BASE}/settings?updated=monitor-added`);
    const api = await apiSettings();
    expect(api.monitors.failure_rate).toEqual([
      {
        id: 'nightly-flaky',
        name: 'Nightly: 20% over a week',
        detection_type: 'flaky',
        enabled: true,
        activation_threshold: 0.2,
        resolution_threshold: 0.1,
        window_hours: 168,
        min_sample_size: 10,
        stale_timeout_hours: null,
        branches: ['main', 'nightly/*'],
      },
    ]);
    const page = (await getPage(t, `${BASE}/settings?updated=monitor-added`, cookie)).body;
    expect(page).toContain('Monitor added.');
    expect(formsOf(page)[0]?.['monitors.failure_rate.0.id']).toBe('nightly-flaky');
  });

  it('refuses a monitor the API refuses, with the API’s message beside its field, and adds nothing', async () => {
    const before = await apiSettings();
    const [, , count] = await forms();
    expect(count?.['_action']).toBe('add_failure_count');
    const badNumber = await postForm(t, `${BASE}/settings`, cookie, {
      ...count,
      'new_count.id': 'on-main',
      'new_count.failure_count': '0',
    });
    expect(badNumber.statusCode).toBe(400);
    expect(badNumber.body).toContain('The monitor was not added');
    expect(badNumber.body).toMatch(
      /<details id="add-failure-count" open>[\s\S]*id="s-new_count-failure_count-error">\$\.settings\.monitors\.failure_count\[1\]\.failure_count must be/,
    );
    // As typed, in the form that was posted.
    expect(formsOf(badNumber.body)[2]?.['new_count.id']).toBe('on-main');
    const duplicate = await postForm(t, `${BASE}/settings`, cookie, {
      ...count,
      'new_count.id': 'default-broken',
    });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.body).toContain('id="s-new_count-id-error"');
    expect(await apiSettings()).toEqual(before);
  });

  it('removes a monitor ticked for removal; the test it marked is re-evaluated and its history says why', async () => {
    const [settings] = await forms();
    expect(settings?.['monitors.failure_count.0.id']).toBe('default-broken');
    const res = await postForm(t, `${BASE}/settings`, cookie, {
      ...settings,
      'monitors.failure_count.0.remove': 'on',
    });
    expect(res.statusCode, res.body).toBe(303);
    const api = await apiSettings();
    expect(api.monitors.failure_count).toEqual([]);
    expect(api.monitors.failure_rate.map((m: { id: string }) => m.id)).toEqual(['nightly-flaky']);
    const history = await t.post(
      '/v1/flaky-tests/get-test-history',
      { repo: REPO, org_url_slug: 'acme', test_id: brokenId },
      token,
    );
    expect(history.statusCode, history.body).toBe(200);
    const latest = history.json().events[0];
    expect(latest).toMatchObject({ kind: 'status', from: 'BROKEN', to: 'HEALTHY' });
    expect(latest.reason).toBe('Resolved: the monitor that flagged this test was removed');
    expect(latest.trigger).toMatchObject({ monitorId: 'default-broken', monitorStatus: 'resolved' });
  });

  it('refuses an add or a removal without the CSRF token, and from another organization', async () => {
    const before = await apiSettings();
    const [settings, rate] = await forms();
    const { _csrf: _a, ...noCsrf } = rate ?? {};
    const refused = await postForm(t, `${BASE}/settings`, cookie, { ...noCsrf, 'new_rate.id': 'x1' });
    expect(refused.statusCode).toBe(403);
    const removal = await postForm(t, `${BASE}/settings`, cookie, {
      ...settings,
      _csrf: 'forged',
      'monitors.failure_rate.0.remove': 'on',
    });
    expect(removal.statusCode).toBe(403);
    const other = await signIn(t, await t.token('globex'));
    const otherForms = formsOf((await getPage(t, '/globex', other)).body);
    expect(otherForms).toEqual([]);
    const theirs = await postForm(t, `${BASE}/settings`, other, { ...rate, 'new_rate.id': 'x2' });
    expect(theirs.statusCode).toBe(404);
    expect(await apiSettings()).toEqual(before);
  });
});
