import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeToken } from '../../src/app/tokens.ts';
import { escapeHtml } from '../../src/web/html.ts';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { csrfOf, getPage, postForm, postLogin, signIn } from '../support/dashboard.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { testingDetails } from '../support/queue-api.ts';
import { apiTokenId, dashboardRepoDayCount, storedTestId } from '../support/reads.ts';
import { BROKEN_ON_MAIN, updateRepositorySettings } from '../support/settings.ts';
import { junitXml, upload } from '../support/upload.ts';

const DAY = 86_400_000;
/** A test name that is also markup: it must only ever appear escaped. */
const HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>';
const xmlEscape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

describe('the web dashboard', () => {
  let t: TestApp;
  let token: string;
  let otherToken: string;
  let clock = Date.UTC(2026, 10, 1, 12);
  let cookie: string;
  const scope = { repo: REPO, org_url_slug: 'acme' };
  const repoPath = '/acme/repos/github.com/acme/web';
  const ids: Record<string, string> = {};

  const unhealthy = async (status: 'FLAKY' | 'BROKEN') =>
    (
      await t.post(
        '/v1/flaky-tests/list-unhealthy-tests',
        { ...scope, status, page_query: { page_size: 100 } },
        token,
      )
    ).json().tests as { id: string; name: string; html_url: string; quarantined: boolean }[];
  /** The first FLAKY test of globex/api, another organization's repository. */
  const globexFlaky = async () =>
    (
      await t.post(
        '/v1/flaky-tests/list-unhealthy-tests',
        {
          repo: { host: 'github.com', owner: 'globex', name: 'api' },
          org_url_slug: 'globex',
          status: 'FLAKY',
          page_query: { page_size: 10 },
        },
        otherToken,
      )
    ).json().tests[0] as { id: string; html_url: string; repository: { html_url: string } };
  const details = async (id: string) =>
    (await t.post('/v1/flaky-tests/get-test-details', { ...scope, test_id: id }, token)).json().test;
  const quarantinedIds = async () =>
    (
      (
        await t.post(
          '/v1/flaky-tests/list-quarantined-tests',
          { ...scope, page_query: { page_size: 100 } },
          token,
        )
      ).json().quarantined_tests as { test_case_id: string }[]
    ).map((q) => q.test_case_id);

  /** Fails, then passes on the same commit a minute later: FLAKY and quarantined. */
  async function makeFlaky(name: string, sha: string, file = 'src/login.test.ts') {
    const files = (fail: boolean) => [
      {
        name: 'r.xml',
        content: junitXml([
          { name: xmlEscape(name), file, fail: fail ? xmlEscape(`Error: ${name} <boom>`) : false },
        ]),
      },
    ];
    const codeowners = '* @acme/web-team\n/src/payments/ @acme/payments\n';
    expect(
      (await upload(t, token, files(true), { sha, pr: 7, branch: 'feature/x', codeowners })).statusCode,
    ).toBe(200);
    clock += 60_000;
    expect(
      (await upload(t, token, files(false), { sha, pr: 7, branch: 'feature/x', codeowners })).statusCode,
    ).toBe(200);
  }

  beforeAll(async () => {
    t = await buildTestApp({}, { now: () => clock });
    token = await t.token('acme');
    otherToken = await t.token('globex');
    await makeFlaky(HOSTILE, 'c0ffee01');
    clock += 2 * DAY;
    await makeFlaky('test_checkout', 'c0ffee02', 'src/payments/checkout.test.ts');
    // A test failing on every run of main: BROKEN by a failure-rate monitor.
    const settings = await updateRepositorySettings(t, token, {
      monitors: { failure_rate: [BROKEN_ON_MAIN] },
    });
    expect(settings.statusCode, settings.body).toBe(200);
    for (let i = 0; i < 3; i++) {
      clock += 60_000;
      await upload(
        t,
        token,
        [
          {
            name: 'b.xml',
            content: junitXml([{ name: 'test_broken', fail: 'AssertionError' }, { name: 'test_fine' }]),
          },
        ],
        { sha: `b0${i}`, branch: 'main' },
      );
    }
    await upload(
      t,
      otherToken,
      [{ name: 'o.xml', content: junitXml([{ name: 'globex_secret_test', fail: 'nope' }]) }],
      { org: 'globex', repo: { host: 'github.com', owner: 'globex', name: 'api' }, sha: 'g1', pr: 1 },
    );
    await upload(t, otherToken, [{ name: 'o.xml', content: junitXml([{ name: 'globex_secret_test' }]) }], {
      org: 'globex',
      repo: { host: 'github.com', owner: 'globex', name: 'api' },
      sha: 'g1',
      pr: 1,
    });
    for (const test of [...(await unhealthy('FLAKY')), ...(await unhealthy('BROKEN'))])
      ids[test.name] = test.id;
    expect(Object.keys(ids).sort()).toEqual([HOSTILE, 'test_broken', 'test_checkout'].sort());
    cookie = await signIn(t, token);
  });
  afterAll(() => t.close());

  it('sends a signed-out visitor to the sign-in form, and back to the page afterwards', async () => {
    expect((await getPage(t, '/')).headers.location).toBe('/login');
    const page = await getPage(t, repoPath);
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe(`/login?next=${encodeURIComponent(repoPath)}`);
    const form = await getPage(t, `/login?next=${encodeURIComponent(repoPath)}`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('<label for="token">API token</label>');
    expect(form.body).toContain(`name="next" value="${repoPath}"`);
    const res = await postLogin(t, { token, next: repoPath });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(repoPath);
    // Never to another site.
    const away = await postLogin(t, { token, next: '//evil.example/x' });
    expect(away.headers.location).toBe('/acme');
  });

  it('refuses an unknown or empty token with the form again and no cookie', async () => {
    for (const bad of ['ml_not_a_token', '']) {
      const res = await postLogin(t, { token: bad });
      expect([400, 401]).toContain(res.statusCode);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.body).toContain('role="alert"');
    }
  });

  it('signs in with an HttpOnly, SameSite=Lax session cookie that holds no token', async () => {
    const res = await postLogin(t, { token });
    const setCookie = String(res.headers['set-cookie']);
    expect(res.headers.location).toBe('/acme');
    expect(setCookie).toMatch(/^mainline_session=v1\./);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).not.toContain('Secure');
    expect(setCookie).not.toContain(token);
    expect(setCookie).not.toContain(token.slice(3, 20));
    expect((await getPage(t, '/', cookie)).headers.location).toBe('/acme');
    expect((await getPage(t, '/login', cookie)).headers.location).toBe('/acme');
  });

  it('marks the cookie Secure when the public URL is https', async () => {
    const secure = await buildTestApp({ MAINLINE_PUBLIC_URL: 'https://mainline.example' });
    try {
      const res = await postLogin(secure, { token: await secure.token('acme') });
      expect(String(res.headers['set-cookie'])).toContain('Secure');
    } finally {
      await secure.close();
    }
  });

  it('overview: each repository with its unhealthy, failing and tracked tests, a 14-day trend and uploads per day', async () => {
    const res = await getPage(t, '/acme', cookie);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('<h1>Repositories</h1>');
    expect(res.body).toContain(`href="${repoPath}"`);
    expect(res.body).not.toContain('globex');
    // The name may break after a "/" only.
    expect(res.body).toContain(`<a href="${repoPath}">github.com/<wbr>acme/<wbr>web</a>`);
    // Unhealthy now: two flaky, one broken; tests tracked: those and test_fine.
    expect(res.body).toContain(`<dt>Unhealthy</dt><dd><a href="${repoPath}">3</a></dd>`);
    expect(res.body).toContain(`<dt>Broken</dt><dd><a href="${repoPath}?show=broken">1</a></dd>`);
    expect(res.body).toContain(`<dt>Tests tracked</dt><dd><a href="${repoPath}/tests">4</a></dd>`);
    expect(res.body).toMatch(
      new RegExp(`<dt>Failing in 24 h</dt><dd><a href="${repoPath}/failing">\\d+</a></dd>`),
    );
    // Two days ago one test was flaky, today two: the line says so day by day, and its scale.
    expect(res.body).toContain(
      'aria-label="Flaky tests per day in github.com/acme/web: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2 (oldest to newest); scaled from 0 (bottom) to its own highest value, 2 (top)"',
    );
    expect(res.body).toContain(
      'Broken tests per day in github.com/acme/web: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1',
    );
    expect(res.body).toContain(
      'Uploads per day in github.com/acme/web: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 5 (oldest to newest); scaled to the highest, 5',
    );
    // Cached: the same figures from the stored days, and the past days are final once read after they ended.
    expect((await getPage(t, '/acme', cookie)).body).toBe(res.body);
    expect(await dashboardRepoDayCount(t)).toBe(14);
  });

  it('unhealthy tests: filters, search, code owners, sorting and paging driven by the query string', async () => {
    const all = await getPage(t, repoPath, cookie);
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('Unhealthy (3)');
    expect(all.body).toContain('Flaky (2)');
    expect(all.body).toContain('Broken (1)');
    expect(all.body).toContain('Quarantined (2)');
    expect(all.body).toContain('3 tests in this list.');
    const names = (body: string) =>
      [...body.matchAll(/class="test-name" href="[^"]+\/tests\/([0-9a-f-]+)"/g)].map((m) => m[1]);
    expect(names(all.body)).toHaveLength(3);
    const broken = await getPage(t, `${repoPath}?show=broken`, cookie);
    expect(names(broken.body)).toEqual([ids['test_broken']]);
    expect(broken.body).toContain('aria-current="page">Broken (1)');
    const quarantined = await getPage(t, `${repoPath}?show=quarantined`, cookie);
    expect(names(quarantined.body).sort()).toEqual([ids[HOSTILE], ids['test_checkout']].sort());
    const search = await getPage(t, `${repoPath}?q=CHECKOUT`, cookie);
    expect(names(search.body)).toEqual([ids['test_checkout']]);
    expect(search.body).toContain('1 test match.');
    const owner = await getPage(t, `${repoPath}?owner=${encodeURIComponent('@acme/payments')}`, cookie);
    expect(names(owner.body)).toEqual([ids['test_checkout']]);
    const wildcard = await getPage(t, `${repoPath}?q=${encodeURIComponent('%')}`, cookie);
    expect(names(wildcard.body)).toEqual([]);
    const byName = await getPage(t, `${repoPath}?sort=name`, cookie);
    expect(names(byName.body)).toEqual([ids[HOSTILE], ids['test_broken'], ids['test_checkout']]);
    expect(byName.body).toContain('<option value="name" selected>');
    const beyond = await getPage(t, `${repoPath}?page=99&show=nonsense&sort=nonsense`, cookie);
    expect(beyond.statusCode).toBe(200);
    expect(names(beyond.body)).toHaveLength(3);
  });

  it('follows an html_url of the API to the test page: status, history, chart, failures, owners, controls', async () => {
    const [listed] = (await unhealthy('FLAKY')).filter((x) => x.name === 'test_checkout');
    const url = new URL(listed!.html_url);
    expect(url.origin).toBe(t.config.publicUrl);
    const res = await getPage(t, url.pathname, cookie);
    expect(res.statusCode).toBe(200);
    const body = res.body;
    expect(body).toContain('<h1>test_checkout</h1>');
    expect(body).toContain('badge-flaky');
    expect(body).toMatch(/Failed and passed on the same commit c0ffee0/);
    expect(body).toContain(
      'Status <span class="badge badge-healthy">HEALTHY</span> → <span class="badge badge-flaky">FLAKY</span>',
    );
    expect(body).toContain('50.0% (1 of 2 runs)');
    expect(body).toContain('role="img"');
    expect(body).toContain(
      'Attempts per day over the last 30 days: 1 passed, 1 failed, 0 failed while quarantined.',
    );
    expect(body).toMatch(/<details>\s*<summary>Error: test_checkout &lt;boom&gt; — 1×/);
    expect(body).toContain('@acme/payments');
    expect(body).toContain('name="setting" value="NEVER_QUARANTINE"');
    expect(body).toContain('Flag as flaky');
    // Any case of the id, like the API.
    expect((await getPage(t, `${repoPath}/tests/${listed!.id.toUpperCase()}`, cookie)).statusCode).toBe(200);
  });

  it('opens the link the analytics CLI prints for a test (url_for_test_case), signing in first when needed', async () => {
    const id = ids['test_checkout'] as string;
    const testPath = `${repoPath}/tests/${id}`;
    const link = `/acme/flaky-tests/test/${id}?repo=acme%2Fweb`;
    const signedOut = await getPage(t, link);
    expect(signedOut.statusCode).toBe(303);
    expect(signedOut.headers.location).toBe(`/login?next=${encodeURIComponent(link)}`);
    const login = await postLogin(t, { token, next: link });
    expect(login.headers.location).toBe(link);
    const res = await getPage(t, link, cookie);
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(testPath);
    const page = await getPage(t, testPath, cookie);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>test_checkout</h1>');
    // Ids and repository names in any case, like the API.
    const upper = await getPage(t, `/ACME/flaky-tests/test/${id.toUpperCase()}?repo=Acme%2FWEB`, cookie);
    expect(upper.headers.location).toBe(testPath);

    // Only the caller's organization, only the named repository: otherwise the same 404 page.
    const globexId = (await globexFlaky()).id;
    const reference = await getPage(t, '/nobody', cookie);
    for (const url of [
      '/acme/flaky-tests/test/00000000-0000-5000-8000-000000000000?repo=acme%2Fweb',
      `/acme/flaky-tests/test/${id}?repo=acme%2Fother`,
      `/acme/flaky-tests/test/${id}?repo=web`,
      `/acme/flaky-tests/test/${id}`,
      `/acme/flaky-tests/test/${globexId}?repo=globex%2Fapi`,
      `/globex/flaky-tests/test/${globexId}?repo=globex%2Fapi`,
    ]) {
      const notFound = await getPage(t, url, cookie);
      expect(notFound.statusCode, url).toBe(404);
      expect(notFound.body, url).toBe(reference.body);
    }
  });

  it('escapes a hostile test name and failure message everywhere', async () => {
    for (const url of [
      '/acme',
      repoPath,
      `${repoPath}?q=${encodeURIComponent('<script>')}`,
      `${repoPath}/tests/${ids[HOSTILE]}`,
    ]) {
      const res = await getPage(t, url, cookie);
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('<script');
      expect(res.body).not.toContain('<img src=x');
    }
    const page = await getPage(t, `${repoPath}/tests/${ids[HOSTILE]}`, cookie);
    expect(page.body).toContain(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;',
    );
    expect(page.body).toContain('Error: &lt;script&gt;');
  });

  it('sends security headers with every page and caches the stylesheet', async () => {
    const res = await getPage(t, repoPath, cookie);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['content-security-policy']).not.toContain('script-src');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-frame-options']).toBe('DENY');
    const href = res.body.match(/<link rel="stylesheet" href="([^"]+)"/)?.[1] as string;
    const css = await getPage(t, href);
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toContain('max-age=31536000');
    const again = await t.app.inject({
      method: 'GET',
      url: href,
      headers: { 'if-none-match': String(css.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
  });

  it('answers pages of another organization exactly like unknown ones', async () => {
    const otherTest = await globexFlaky();
    const foreign = [
      '/globex',
      new URL(otherTest.html_url).pathname,
      new URL(otherTest.repository.html_url).pathname,
      '/acme/repos/github.com/globex/api',
      `${repoPath}/tests/${otherTest.id}`,
      '/globex/repos/github.com/globex/api/queues/main',
    ];
    const unknown = [
      '/nobody',
      '/acme/repos/github.com/acme/nope',
      `${repoPath}/tests/00000000-0000-5000-8000-000000000000`,
      `${repoPath}/queues/main`,
      `${repoPath}/nonsense/path`,
    ];
    const reference = await getPage(t, '/nobody', cookie);
    expect(reference.statusCode).toBe(404);
    for (const url of [...foreign, ...unknown]) {
      const res = await getPage(t, url, cookie);
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).toBe(reference.body);
      expect(res.body).not.toContain('globex_secret_test');
    }
    // Form posts too.
    const post404 = await postForm(
      t,
      `/globex/repos/github.com/globex/api/tests/${otherTest.id}/flag`,
      cookie,
      {
        _csrf: csrfOf(reference.body),
        flagged: 'true',
      },
    );
    expect(post404.statusCode).toBe(404);
  });

  it('refuses a form without the session’s CSRF token or from another site, and changes nothing', async () => {
    const id = ids[HOSTILE] as string;
    const testPath = `${repoPath}/tests/${id}`;
    const page = await getPage(t, testPath, cookie);
    const csrf = csrfOf(page.body);
    const otherSession = await signIn(t, token);
    const otherCsrf = csrfOf((await getPage(t, testPath, otherSession)).body);
    expect(otherCsrf).not.toBe(csrf);
    const attempts = [
      postForm(t, `${testPath}/quarantine`, cookie, { setting: 'NEVER_QUARANTINE' }),
      postForm(t, `${testPath}/quarantine`, cookie, { setting: 'NEVER_QUARANTINE', _csrf: 'forged' }),
      postForm(t, `${testPath}/quarantine`, cookie, { setting: 'NEVER_QUARANTINE', _csrf: otherCsrf }),
      postForm(
        t,
        `${testPath}/quarantine`,
        cookie,
        { setting: 'NEVER_QUARANTINE', _csrf: csrf },
        { origin: 'https://evil.example' },
      ),
      postForm(t, `${testPath}/flag`, cookie, { flagged: 'false', _csrf: csrf.slice(1) }),
      postForm(t, '/logout', cookie, {}),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('Form refused');
    }
    expect((await details(id)).quarantined).toBe(true);
    expect((await getPage(t, repoPath, cookie)).statusCode).toBe(200);
  });

  it('changes the quarantine override through the page, as the API then shows', async () => {
    const id = ids[HOSTILE] as string;
    const testPath = `${repoPath}/tests/${id}`;
    const csrf = csrfOf((await getPage(t, testPath, cookie)).body);
    expect(await quarantinedIds()).toContain(id);
    const res = await postForm(t, `${testPath}/quarantine`, cookie, {
      _csrf: csrf,
      setting: 'NEVER_QUARANTINE',
      reason: 'must fail CI <always>',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${testPath}?updated=quarantine`);
    expect((await details(id)).quarantined).toBe(false);
    expect(await quarantinedIds()).not.toContain(id);
    const after = await getPage(t, res.headers.location as string, cookie);
    expect(after.body).toContain('The quarantine override was saved.');
    expect(after.body).toContain('name="setting" value="NEVER_QUARANTINE" checked');
    expect(after.body).toContain('must fail CI &lt;always&gt;');
    expect(after.body).toContain('Quarantine override auto → never quarantine');
    const bad = await postForm(t, `${testPath}/quarantine`, cookie, { _csrf: csrf, setting: 'SOMETIMES' });
    expect(bad.statusCode).toBe(400);
  });

  it('flags a test as flaky through the page, with the same use case as the API', async () => {
    const id = await storedTestId(t, 'test_fine');
    const testPath = `${repoPath}/tests/${id}`;
    const csrf = csrfOf((await getPage(t, testPath, cookie)).body);
    expect((await details(id)).status.value).toBe('healthy');
    const flagged = await postForm(t, `${testPath}/flag`, cookie, {
      _csrf: csrf,
      flagged: 'true',
      reason: 'seen it flap',
    });
    expect(flagged.statusCode).toBe(303);
    expect((await details(id)).status.value).toBe('flaky');
    const page = await getPage(t, `${testPath}?updated=flag`, cookie);
    expect(page.body).toContain('Remove the flaky flag');
    expect(page.body).toContain('Flagged as flaky by hand');
    const unflagged = await postForm(t, `${testPath}/flag`, cookie, { _csrf: csrf, flagged: 'false' });
    expect(unflagged.statusCode).toBe(303);
    expect((await details(id)).status.value).toBe('healthy');
  });

  it('signs out when the cookie is tampered with, expired, or its token revoked', async () => {
    const tampered = cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const res = await getPage(t, repoPath, tampered);
    expect(res.statusCode).toBe(303);
    expect(String(res.headers['set-cookie'])).toContain('Max-Age=0');
    const saved = clock;
    clock += 13 * 3_600_000;
    expect((await getPage(t, repoPath, cookie)).statusCode).toBe(303);
    clock = saved;
    const own = await t.token('acme');
    const doomed = await signIn(t, own);
    expect((await getPage(t, repoPath, doomed)).statusCode).toBe(200);
    await revokeToken(t.db.database.db, await apiTokenId(t, own), clock, t.caches.tokens);
    const after = await getPage(t, repoPath, doomed);
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toMatch(/^\/login/);
    expect(String(after.headers['set-cookie'])).toContain('Max-Age=0');
  });

  it('reads owners of several segments, even ones named like a page ("tests", "queues")', async () => {
    const repo = { host: 'gitlab.example', owner: 'acme/tests', name: 'queues' };
    for (const fail of [true, false]) {
      await upload(
        t,
        token,
        [{ name: 'g.xml', content: junitXml([{ name: 'test_nested', fail: fail && 'x' }]) }],
        {
          repo,
          sha: 'n1',
          pr: 9,
        },
      );
      clock += 1000;
    }
    const listed = (
      await t.post(
        '/v1/flaky-tests/list-unhealthy-tests',
        { repo, org_url_slug: 'acme', status: 'FLAKY', page_query: { page_size: 10 } },
        token,
      )
    ).json().tests[0];
    const repoPage = await getPage(t, new URL(listed.repository.html_url).pathname, cookie);
    expect(repoPage.statusCode).toBe(200);
    expect(repoPage.body).toContain('gitlab.example/acme/tests/queues');
    const testPage = await getPage(t, new URL(listed.html_url).pathname, cookie);
    expect(testPage.statusCode).toBe(200);
    expect(testPage.body).toContain('<h1>test_nested</h1>');
    // The analytics CLI's link names the repository as owner/name, subgroups in the owner.
    const link = await getPage(t, `/acme/flaky-tests/test/${listed.id}?repo=acme%2Ftests%2Fqueues`, cookie);
    expect(link.headers.location).toBe(new URL(listed.html_url).pathname);
  });

  it('signs out with the form, which needs its CSRF token', async () => {
    const session = await signIn(t, token);
    const csrf = csrfOf((await getPage(t, '/acme', session)).body);
    const res = await postForm(t, '/logout', session, { _csrf: csrf });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login');
    expect(String(res.headers['set-cookie'])).toContain('Max-Age=0');
  });
});

describe('the merge queue pages', () => {
  let s: GitScenario;
  let cookie: string;
  let runId: string;
  const base = '/acme/repos/github.com/acme/web';

  beforeAll(async () => {
    s = await GitScenario.create({ directMergeMode: 'off', flakeProtection: 'ignore_quarantined' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add <a> feature');
    await s.openPr(2, { 'b.txt': 'b\n' }, 'Add b');
    // test_flaky: failed and passed on one commit → FLAKY, quarantined.
    await upload(
      s.t,
      s.token,
      [{ name: 'r.xml', content: junitXml([{ name: 'test_flaky', fail: 'timeout' }]) }],
      {
        sha: 'f1a4e00',
      },
    );
    await upload(s.t, s.token, [{ name: 'r.xml', content: junitXml([{ name: 'test_flaky' }]) }], {
      sha: 'f1a4e00',
    });
    await s.submit(1);
    await s.settle();
    const run = (await s.runsInProgress()).find((r) => r.tested.includes(1));
    runId = run!.id;
    await upload(
      s.t,
      s.token,
      [
        {
          name: 'ci.xml',
          content: junitXml([{ name: 'test_flaky', fail: 'AssertionError' }, { name: 'test_ok' }]),
        },
      ],
      { sha: run!.sha, branch: 'ci-checkout' },
    );
    await s.post('/v1/git/reportStatus', {
      repo: REPO,
      sha: run!.sha,
      context: 'ci',
      state: 'failure',
      url: 'https://ci.example/build/1',
    });
    await s.settle();
    await s.settle();
    expect((await s.pr(1)).state).toBe('merged');
    await s.submit(2);
    await s.settle();
    cookie = await signIn(s.t, s.token);
  });
  afterAll(() => s.close());

  it('queue page: state, settings, PRs in the queue with their wait, finished PRs and test runs', async () => {
    const res = await getPage(s.t, `${base}/queues/main`, cookie);
    expect(res.statusCode).toBe(200);
    const body = res.body;
    expect(body).toContain('<h1>Merge queue · main</h1>');
    expect(body).toContain('badge-running');
    expect(body).toContain('<dt>Flake protection</dt><dd>ignore_quarantined</dd>');
    expect(body).toContain('<dt>Merge method</dt>');
    expect(body).toContain(`href="${base}/queues/main/prs/2"`);
    expect(body).toContain('Add &lt;a&gt; feature');
    expect(body).toContain(`href="${base}/queues/main/runs/${runId}"`);
    expect(body).toMatch(/In the queue \(1\)/);
    // The repository page and the overview link the queue.
    expect((await getPage(s.t, base, cookie)).body).toContain(`href="${base}/queues/main"`);
    expect((await getPage(s.t, '/acme', cookie)).body).toContain(`href="${base}/queues/main"`);
  });

  it('test run page: everything getMergeQueueTestingDetails returns, each check linked', async () => {
    const api = await testingDetails(s, REPO, runId);
    const res = await getPage(s.t, `${base}/queues/main/runs/${runId}`, cookie);
    expect(res.statusCode).toBe(200);
    const body = res.body;
    expect(body).toContain(api.testBranch);
    expect(body).toContain(api.testBranchSha);
    expect(body).toContain(
      '<a href="https://ci.example/build/1" rel="noopener noreferrer">https://ci.example/build/1</a>',
    );
    expect(body).toContain('<dt>Status</dt><dd><span class="badge badge-succeeded">');
    expect(body).toContain('<td>ci</td><td><span class="badge badge-failure">FAILURE</span>');
    expect(body).toContain('1 upload(s), 2 tests, 1 failed');
    expect(body).toContain('badge-ignored_quarantined');
    expect(body).toContain(escapeHtml(api.flakeProtection.reason));
    expect(body).toContain(`href="${base}/queues/main/prs/1"`);
    expect(body).toContain('test_flaky</a>');
    expect((await getPage(s.t, `${base}/queues/main/runs/not-a-run`, cookie)).statusCode).toBe(404);
  });

  it('PR page: the state with its reason, and why it merged despite a failed test (flake protection)', async () => {
    const api = await s.pr(1);
    const res = await getPage(s.t, `${base}/queues/main/prs/1`, cookie);
    expect(res.statusCode).toBe(200);
    const body = res.body;
    expect(body).toContain('badge-merged');
    expect(body).toContain('Merged despite a failed test.');
    expect(body).toContain('<dt>Why</dt>');
    expect(api.stateReason).toMatch(/only quarantined tests failed/);
    expect(body).toContain(escapeHtml(api.stateReason));
    expect(body).toContain('Flake protection judgement');
    expect(body).toContain('<dt>Decision</dt><dd><span class="badge badge-ignored_quarantined">');
    expect(body).toContain('test_flaky</a>');
    for (const h of api.history) expect(body).toContain(escapeHtml(h.reason));
    expect((await getPage(s.t, `${base}/queues/main/prs/99`, cookie)).statusCode).toBe(404);
  });

  it('pull request page: the PR of the built-in git forge and its submissions', async () => {
    const res = await getPage(s.t, `${base}/pulls/1`, cookie);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Add &lt;a&gt; feature');
    expect(res.body).toContain('feature-1 → main');
    expect(res.body).toContain(`href="${base}/queues/main/prs/1"`);
    expect((await getPage(s.t, `${base}/pulls/404`, cookie)).statusCode).toBe(404);
  });
});
